// electron-updater's multi-range download, the code its differential downloads run
// (differentialDownloader/multipleRangeDownloader.js and DataSplitter.js, from npm), in plain Node
// against a download URL: the file is rebuilt from blocks of an old file and ranges of the new
// one, all the ranges in one request as electron-updater asks for them.
// Usage: node electron-updater-ranges.js URL OLD_FILE OUT_FILE PLAN
// PLAN is JSON: [["copy" | "download", start, end], ...] in file order ("copy" from OLD_FILE).
// Prints one JSON line: {written: bytes}.
"use strict";
const fs = require("node:fs");
const http = require("node:http");
const {
  executeTasksUsingMultipleRangeRequests,
} = require("electron-updater/out/differentialDownloader/multipleRangeDownloader");
const { OperationKind } = require("electron-updater/out/differentialDownloader/downloadPlanBuilder");

function main() {
  const [url, oldFile, outFile, plan] = process.argv.slice(2);
  const tasks = JSON.parse(plan).map(([kind, start, end]) => ({
    kind: kind === "copy" ? OperationKind.COPY : OperationKind.DOWNLOAD,
    start,
    end,
  }));
  const target = new URL(url);
  // what DifferentialDownloader hands the function: its request options and HTTP executor
  const downloader = {
    fileMetadataBuffer: null,
    options: {},
    createRequestOptions: () => ({
      hostname: target.hostname,
      port: target.port,
      path: target.pathname + target.search,
      headers: {},
    }),
    httpExecutor: {
      createRequest: (options, callback) => http.request(options, callback),
      addErrorAndTimeoutHandlers: (request, reject) => request.on("error", reject),
    },
  };
  const oldFileFd = fs.openSync(oldFile, "r");
  const out = fs.createWriteStream(outFile);
  const done = new Promise((resolve, reject) => {
    out.on("finish", resolve);
    out.on("error", reject);
    executeTasksUsingMultipleRangeRequests(downloader, tasks, out, oldFileFd, reject)(0);
  });
  done.then(
    () => console.log(JSON.stringify({ written: fs.statSync(outFile).size })),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}

main();
