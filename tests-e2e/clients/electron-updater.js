// electron-updater (npm) in plain Node: the real AppImageUpdater with a stub app adapter and a
// plain `http` executor in place of Electron's `net`, pointed at
// - a generic-provider feed (FEED is its base URL: the update feeds, test_updaters.py), or
// - the GitHub provider with a custom host, the GitHub Enterprise layout (FEED is
//   `github:HOST:PORT/OWNER/REPO`: it reads `/{owner}/{repo}/releases.atom`, then
//   `/api/v3/repos/{owner}/{repo}/releases/latest`, then the release's `latest-linux.yml`;
//   apis/test_api_clients.py).
// Usage: node electron-updater.js FEED CURRENT_VERSION WORK_DIR [STAGING_ID] [CHANNEL] [DOWNGRADE]
// (STAGING_ID and CHANNEL may be empty; DOWNGRADE `allow` or `deny` sets its allowDowngrade)
// Prints one JSON line: {available, version, stagingPercentage, downloaded: [paths]}.
"use strict";
const fs = require("node:fs");
const http = require("node:http");
const https = require("node:https");
const path = require("node:path");
const {
  HttpExecutor,
  configureRequestOptions,
  configureRequestUrl,
} = require("builder-util-runtime");
const { AppImageUpdater } = require("electron-updater");

// ElectronHttpExecutor's `download`, with Node's http in place of Electron's net module
class NodeHttpExecutor extends HttpExecutor {
  createRequest(options, callback) {
    return (options.protocol === "https:" ? https : http).request(options, callback);
  }

  download(url, destination, options) {
    return options.cancellationToken.createPromise((resolve, reject, onCancel) => {
      const requestOptions = { headers: options.headers || undefined };
      configureRequestUrl(url, requestOptions);
      configureRequestOptions(requestOptions);
      this.doDownload(
        requestOptions,
        {
          destination,
          options,
          onCancel,
          callback: (error) => (error == null ? resolve(destination) : reject(error)),
          responseHandler: null,
        },
        0,
      );
    });
  }
}

// what electron-builder writes into a packaged app (app-update.yml) for either provider
function providerConfig(feed) {
  if (!feed.startsWith("github:")) return `provider: generic\nurl: ${feed}\n`;
  const [host, owner, repo] = feed.slice("github:".length).split("/");
  return `provider: github\nowner: ${owner}\nrepo: ${repo}\nhost: ${host}\nprotocol: http\n`;
}

async function main() {
  const [feed, current, dir, stagingId, channel, downgrade] = process.argv.slice(2);
  fs.mkdirSync(dir, { recursive: true });
  const config = `${providerConfig(feed)}updaterCacheDirName: forge-test-updater\n`;
  fs.writeFileSync(path.join(dir, "app-update.yml"), config);
  if (stagingId) fs.writeFileSync(path.join(dir, ".updaterId"), stagingId);
  const app = {
    version: current,
    name: "App",
    isPackaged: true,
    appUpdateConfigPath: path.join(dir, "app-update.yml"),
    userDataPath: dir,
    baseCachePath: path.join(dir, "cache"),
    whenReady: () => Promise.resolve(),
    relaunch() {},
    quit() {},
    onQuit() {},
  };
  // the AppImage being replaced: the updater needs one to exist
  process.env.APPIMAGE = path.join(dir, "Current.AppImage");
  fs.writeFileSync(process.env.APPIMAGE, "old");
  const updater = new AppImageUpdater(null, app);
  updater.httpExecutor = new NodeHttpExecutor();
  updater.autoDownload = false;
  // The old file carries no embedded blockmap here, so a differential download could only fall
  // back to a full one: ask for the full download directly.
  updater.disableDifferentialDownload = true;
  updater.logger = { info() {}, warn: (m) => console.error(m), error: (m) => console.error(m) };
  if (channel) updater.channel = channel;
  // after the channel: setting a channel turns allowDowngrade on (electron-updater's own rule)
  if (downgrade) updater.allowDowngrade = downgrade === "allow";
  const result = await updater.checkForUpdates();
  const available = Boolean(result && result.isUpdateAvailable);
  const out = {
    available,
    version: result ? result.updateInfo.version : null,
    stagingPercentage: result ? (result.updateInfo.stagingPercentage ?? null) : null,
    downloaded: [],
  };
  // downloadUpdate verifies the SHA-512 of the feed against the bytes and throws on a mismatch
  if (available) out.downloaded = await updater.downloadUpdate();
  console.log(JSON.stringify(out));
}

// Exit once done: after following a redirect (a yml's file name resolved under the feed answers
// 302 to the download) builder-util-runtime leaves the redirect's response unread, and its
// keep-alive socket would keep Node running until the server closes it. An app lives on anyway.
main().then(() => process.exit(0)).catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
