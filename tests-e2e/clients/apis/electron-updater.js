// electron-updater (npm) in plain Node with its GitHub provider and a custom host (the GitHub
// Enterprise layout): the real AppImageUpdater with a stub app adapter and a plain `http`
// executor in place of Electron's `net`. It reads `/{owner}/{repo}/releases.atom`, asks
// `/api/v3/repos/{owner}/{repo}/releases/latest` for the tag, then downloads that release's
// `latest-linux.yml` and the file it names (SHA-512 checked).
// Usage: node electron-updater.js HOST:PORT OWNER REPO CURRENT_VERSION WORK_DIR
// Prints one JSON line: {available, version, downloaded: [paths]}.
"use strict";
const fs = require("node:fs");
const http = require("node:http");
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
    return http.request(options, callback);
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

async function main() {
  const [host, owner, repo, current, dir] = process.argv.slice(2);
  fs.mkdirSync(dir, { recursive: true });
  // what electron-builder writes into a packaged app published to GitHub Enterprise
  const config =
    `provider: github\nowner: ${owner}\nrepo: ${repo}\nhost: ${host}\nprotocol: http\n` +
    "updaterCacheDirName: forge-compat-updater\n";
  fs.writeFileSync(path.join(dir, "app-update.yml"), config);
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
  process.env.APPIMAGE = path.join(dir, "Current.AppImage"); // the file being replaced
  fs.writeFileSync(process.env.APPIMAGE, "old");
  const updater = new AppImageUpdater(null, app);
  updater.httpExecutor = new NodeHttpExecutor();
  updater.autoDownload = false;
  updater.disableDifferentialDownload = true; // the old file has no blockmap
  updater.logger = { info() {}, warn: (m) => console.error(m), error: (m) => console.error(m) };
  const result = await updater.checkForUpdates();
  const available = Boolean(result && result.isUpdateAvailable);
  const out = { available, version: result ? result.updateInfo.version : null, downloaded: [] };
  if (available) out.downloaded = await updater.downloadUpdate();
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
