// Electron Forge's @electron-forge/publisher-github (npm), as `electron-forge publish` runs it,
// against the GitHub-shaped API (`{base}api/v3`, octokitOptions.baseUrl: the GitHub Enterprise
// setting): it finds the release by tag in the list (or creates it), skips each artifact whose
// GitHub-sanitised name the release already has, and uploads the others.
// Usage: node forge-publisher.js BASE_URL OWNER REPO VERSION TOKEN FILE...
// Prints one JSON line: {assets: [{id, name, size}]} of the release after publishing.
"use strict";
const { PublisherGithub } = require("@electron-forge/publisher-github");
const { Octokit } = require("@octokit/rest");

async function main() {
  const [base, owner, repo, version, token, ...files] = process.argv.slice(2);
  const baseUrl = `${base}api/v3`;
  const config = {
    repository: { owner, name: repo },
    authToken: token,
    draft: false,
    octokitOptions: { baseUrl },
  };
  const publisher = new PublisherGithub(config);
  const makeResults = [
    {
      artifacts: files,
      packageJSON: { name: repo, version },
      platform: "win32",
      arch: "x64",
    },
  ];
  await publisher.publish({ makeResults, dir: process.cwd(), forgeConfig: {}, setStatusLine() {} });
  const kit = new Octokit({ baseUrl, auth: token });
  const release = (await kit.rest.repos.getReleaseByTag({ owner, repo, tag: `v${version}` })).data;
  const assets = release.assets.map((a) => ({ id: a.id, name: a.name, size: a.size }));
  console.log(JSON.stringify({ draft: release.draft, assets }));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  if (err && err.response) console.error(JSON.stringify(err.response.data));
  process.exit(1);
});
