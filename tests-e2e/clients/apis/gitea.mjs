// gitea-js (npm) against the Gitea-shaped API (`{base}api/v1`).
// Usage: node gitea.mjs BASE_URL OWNER REPO TAG [TOKEN] [NEW_TAG]
// Reads (every page of the list by `X-Total-Count`, by tag, by id, attachments, one attachment,
// its bytes at `browser_download_url`, the repository); with NEW_TAG also creates a release and
// uploads an attachment (multipart `attachment`), then downloads it. Prints one JSON line.
import { giteaApi } from "gitea-js";

const [base, owner, repo, tag, token, newTag] = process.argv.slice(2);
const root = base.replace(/\/$/, "");
const api = giteaApi(root, { token: token || undefined });
const auth = token ? { Authorization: `token ${token}` } : {};

async function download(url) {
  const reply = await fetch(url, { headers: auth });
  if (!reply.ok) throw new Error(`download ${url}: ${reply.status}`);
  return reply.text();
}

async function anonymousStatus() {
  try {
    await giteaApi(root).repos.repoListReleases(owner, repo);
    return 200;
  } catch (error) {
    return error.status;
  }
}

const out = { anonymousStatus: await anonymousStatus() };
const tags = [];
for (let page = 1; ; page++) {
  const reply = await api.repos.repoListReleases(owner, repo, { page, limit: 1 });
  tags.push(...reply.data.map((r) => r.tag_name));
  if (tags.length >= Number(reply.headers.get("x-total-count")) || !reply.data.length) break;
}
out.tags = tags;
const byTag = (await api.repos.repoGetReleaseByTag(owner, repo, tag)).data;
const byId = (await api.repos.repoGetRelease(owner, repo, byTag.id)).data;
out.sameRelease = byTag.id === byId.id && byId.tag_name === tag;
const assets = (await api.repos.repoListReleaseAttachments(owner, repo, byId.id)).data;
out.assets = assets.map((a) => a.name);
const one = (await api.repos.repoGetReleaseAttachment(owner, repo, byId.id, assets[0].id)).data;
out.assetBytes = await download(one.browser_download_url);
out.repo = (await api.repos.repoGet(owner, repo)).data.full_name;
if (newTag) {
  const created = (
    await api.repos.repoCreateRelease(owner, repo, { tag_name: newTag, name: "By gitea-js" })
  ).data;
  const file = new File(["uploaded by gitea-js"], "gitea.txt", { type: "text/plain" });
  const uploaded = (
    await api.repos.repoCreateReleaseAttachment(owner, repo, created.id, { attachment: file })
  ).data;
  out.uploaded = { name: uploaded.name, bytes: await download(uploaded.browser_download_url) };
}
console.log(JSON.stringify(out));
