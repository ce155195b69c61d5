// electron-builder's publisher, electron-publish's GitHubPublisher (npm), as
// `electron-builder --publish always` drives it with `publish: {provider: "github", host}`:
// it lists the releases at `https://HOST/api/v3/...` (https and port 443 only: it builds every
// address from `https://${host}`, and uploads to the hostname of the release's `upload_url`),
// takes the draft of the tag or creates one, and uploads each file; GitHub's 422
// `already_exists` makes it delete the old asset and upload again.
// Usage: node electron-publish.js HOST OWNER REPO VERSION FILE[=UPLOAD_NAME]...
// (GH_TOKEN in the environment; UPLOAD_NAME is electron-builder's safe artifact name).
// Prints one JSON line: {uploaded: [names]}.
"use strict";
const path = require("node:path");
const { CancellationToken } = require("builder-util-runtime");
const { GitHubPublisher } = require("electron-publish");

async function main() {
  const [host, owner, repo, version, ...files] = process.argv.slice(2);
  const context = { cancellationToken: new CancellationToken(), progress: null };
  const info = { provider: "github", owner, repo, host, token: process.env.GH_TOKEN };
  const publisher = new GitHubPublisher(context, info, version, { publish: "always" });
  const uploaded = [];
  // one at a time, as electron-builder's PublishManager awaits each artifact of a target
  for (const spec of files) {
    const [file, safeArtifactName] = spec.split("=");
    await publisher.upload({ file, arch: null, safeArtifactName: safeArtifactName || null });
    uploaded.push(safeArtifactName || path.basename(file));
  }
  console.log(JSON.stringify({ uploaded }));
}

// Exit once done: builder-util-runtime resolves a 204 (the DELETE of the re-run) without reading
// the response, so each such keep-alive socket stays referenced until the server closes it
// (a minute here), though the publishing is over.
main().then(() => process.exit(0)).catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
