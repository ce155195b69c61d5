// @octokit/rest (npm) against the GitHub-shaped API (GitHub Enterprise layout: `{base}api/v3`).
// Usage: node octokit.mjs BASE_URL OWNER REPO TAG [TOKEN] [NEW_TAG]
// Reads (paginated list, by tag, by id, assets, asset bytes, the repository); with NEW_TAG also
// creates a release and uploads an asset through the release's `upload_url`, then reads it back.
// Prints one JSON line.
import { Octokit } from "@octokit/rest";

const [base, owner, repo, tag, token, newTag] = process.argv.slice(2);
const kit = new Octokit({ baseUrl: `${base}api/v3`, auth: token || undefined });
const text = (data) => Buffer.from(data).toString();

async function anonymousStatus() {
  try {
    await new Octokit({ baseUrl: `${base}api/v3` }).rest.repos.listReleases({ owner, repo });
    return 200;
  } catch (error) {
    return error.status;
  }
}

const out = { anonymousStatus: await anonymousStatus() };
// one release per page: octokit follows the `Link` header to the end
const all = await kit.paginate(kit.rest.repos.listReleases, { owner, repo, per_page: 1 });
out.tags = all.map((r) => r.tag_name);
const byTag = (await kit.rest.repos.getReleaseByTag({ owner, repo, tag })).data;
const byId = (await kit.rest.repos.getRelease({ owner, repo, release_id: byTag.id })).data;
out.sameRelease = byTag.id === byId.id && byId.tag_name === tag;
const assets = (await kit.rest.repos.listReleaseAssets({ owner, repo, release_id: byId.id })).data;
out.assets = assets.map((a) => a.name);
const bytes = await kit.rest.repos.getReleaseAsset({
  owner,
  repo,
  asset_id: assets[0].id,
  headers: { accept: "application/octet-stream" },
});
out.assetBytes = text(bytes.data);
out.repo = (await kit.rest.repos.get({ owner, repo })).data.full_name;
if (newTag) {
  const created = (
    await kit.rest.repos.createRelease({ owner, repo, tag_name: newTag, name: "By octokit" })
  ).data;
  const uploaded = (
    await kit.rest.repos.uploadReleaseAsset({
      owner,
      repo,
      release_id: created.id,
      url: created.upload_url,
      name: "octokit.txt",
      label: "Octokit",
      data: "uploaded by octokit",
      headers: { "content-type": "text/plain" },
    })
  ).data;
  const back = await kit.rest.repos.getReleaseAsset({
    owner,
    repo,
    asset_id: uploaded.id,
    headers: { accept: "application/octet-stream" },
  });
  out.uploaded = { name: uploaded.name, bytes: text(back.data) };
}
console.log(JSON.stringify(out));
