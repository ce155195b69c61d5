// gitea-js (npm) administering forge through the Gitea-shaped API (docs/accounts.md).
// Usage: node gitea_admin.mjs BASE_URL ADMIN_TOKEN
// A site admin creates users; one of them makes a token with their password (basic auth, as
// Gitea wants), an organization, a repository, a team with a member and the repository, a
// collaborator; a read:repository token is refused a publish, a write:repository token is not.
// Prints one JSON line.
import { Api, giteaApi } from "gitea-js";

const [base, adminToken] = process.argv.slice(2);
const root = base.replace(/\/$/, "");
const admin = giteaApi(root, { token: adminToken });
const basic = (user, password) =>
  new Api({
    baseUrl: `${root}/api/v1`,
    baseApiParams: {
      format: "json",
      headers: { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
    },
  });

async function status(call) {
  try {
    const reply = await call();
    return { status: reply.status };
  } catch (error) {
    return { status: error.status, message: error.error?.message };
  }
}

const out = { version: (await admin.version.getVersion()).data.version };
for (const name of ["carol", "dave", "erin"]) {
  const made = await admin.admin.adminCreateUser({
    username: name,
    email: `${name}@example.com`,
    password: `${name}-password-1`,
    must_change_password: false,
  });
  out[name] = made.data.login;
}
const carolBasic = basic("carol", "carol-password-1");
const setup = (await carolBasic.users.userCreateToken("carol", { name: "setup", scopes: ["all"] }))
  .data;
out.tokenLength = setup.sha1.length;
const carol = giteaApi(root, { token: setup.sha1 });
out.me = (await carol.user.userGetCurrent()).data.login;
out.org = (await carol.orgs.orgCreate({ username: "carolco", visibility: "private" })).data.name;
const repo = (await carol.orgs.createOrgRepo("carolco", { name: "desktop", private: true })).data;
out.repo = repo.full_name;
out.ownRepo = (await carol.user.createCurrentUserRepo({ name: "notes" })).data.full_name;
const team = (
  await carol.orgs.orgCreateTeam("carolco", {
    name: "release",
    permission: "write",
    units: ["repo.releases"],
  })
).data;
out.team = [team.name, team.permission];
await carol.teams.orgAddTeamMember(team.id, "dave");
await carol.teams.orgAddTeamRepository(team.id, "carolco", "desktop");
out.teams = (await carol.orgs.orgListTeams("carolco")).data.map((t) => t.name);
await carol.repos.repoAddCollaborator("carolco", "desktop", "erin", { permission: "read" });
out.edited = (await carol.repos.repoEdit("carolco", "desktop", { description: "The app" })).data
  .description;

// dave publishes through the team; erin, a reader, may not; nobody else sees the repository
const daveToken = (
  await basic("dave", "dave-password-1").users.userCreateToken("dave", {
    name: "ci",
    scopes: ["write:repository"],
  })
).data.sha1;
const dave = giteaApi(root, { token: daveToken });
out.davePublish = await status(() =>
  dave.repos.repoCreateRelease("carolco", "desktop", { tag_name: "v1.0.0" }),
);
const erinToken = (
  await basic("erin", "erin-password-1").users.userCreateToken("erin", {
    name: "ci",
    scopes: ["write:repository"],
  })
).data.sha1;
out.erinPublish = await status(() =>
  giteaApi(root, { token: erinToken }).repos.repoCreateRelease("carolco", "desktop", {
    tag_name: "v1.0.1",
  }),
);

// a token limited to reading repositories is refused a publish with Gitea's message
const readOnly = (
  await carolBasic.users.userCreateToken("carol", { name: "reader", scopes: ["read:repository"] })
).data.sha1;
const reader = giteaApi(root, { token: readOnly });
out.readerPublish = await status(() =>
  reader.repos.repoCreateRelease("carolco", "desktop", { tag_name: "v2.0.0" }),
);
out.readerRead = await status(() => reader.repos.repoListReleases("carolco", "desktop"));
out.tokens = (await carolBasic.users.userGetTokens("carol")).data.map((t) => t.name);
out.deleteToken = await status(() => carolBasic.users.userDeleteAccessToken("carol", "reader"));
out.removeMember = await status(() => carol.orgs.orgDeleteMember("carolco", "dave"));
out.daveAfter = await status(() => dave.repos.repoGet("carolco", "desktop"));
out.deleteRepo = await status(() => carol.repos.repoDelete("carol", "notes"));
out.editedUser = (
  await admin.admin.adminEditUser("erin", { login_name: "erin", source_id: 0, full_name: "Erin E." })
).data.full_name;
out.deleteUser = await status(() => admin.admin.adminDeleteUser("erin"));
console.log(JSON.stringify(out));
