// update-electron-app (npm) loaded with a stub `electron` module: prints the feed URL it gives
// Electron's autoUpdater for the given host, repo, platform, arch and app version.
// Usage: node update-electron-app.js HOST OWNER/REPO PLATFORM ARCH VERSION
"use strict";
const Module = require("node:module");
const { EventEmitter } = require("node:events");

const [host, repo, platform, arch, version] = process.argv.slice(2);
Object.defineProperty(process, "platform", { value: platform });
Object.defineProperty(process, "arch", { value: arch });

const autoUpdater = new EventEmitter();
autoUpdater.setFeedURL = (options) => {
  console.log(JSON.stringify(options));
  process.exit(0);
};
autoUpdater.checkForUpdates = () => {};
const electron = {
  app: Object.assign(new EventEmitter(), {
    isPackaged: true,
    isReady: () => true,
    getVersion: () => version,
  }),
  autoUpdater,
  dialog: { showMessageBox: () => Promise.resolve({ response: 1 }) },
};
const load = Module._load;
Module._load = function (request, ...rest) {
  return request === "electron" ? electron : load.call(this, request, ...rest);
};

const { updateElectronApp } = require("update-electron-app");
updateElectronApp({ updateSource: { type: 0, host, repo }, logger: { log() {}, info() {} } });
console.error("update-electron-app never set a feed URL");
process.exit(1);
