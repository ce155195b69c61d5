// The release console's one script (docs/console.md): several files uploaded at once from the
// edit page, each in its own request to the same upload route as the plain form, with a progress
// bar, a cancel button and its own error. Without this script the form uploads one file.
"use strict";

(function () {
  var form = document.getElementById("upload-form");
  var list = document.getElementById("uploads");
  if (!form || !list || !window.FormData || !window.XMLHttpRequest) {
    return;
  }
  var input = form.querySelector("input[type=file]");
  var token = form.querySelector("input[name=_csrf]").value;
  input.multiple = true;
  var running = 0;
  var failed = 0;
  var stored = 0;
  var editPage = form.action.replace(/\/assets$/, "") + "?done=uploaded";

  function uploadedPage() {
    return stored > 1 ? editPage + "&files=" + stored : editPage;
  }

  function finished(ok) {
    running -= 1;
    if (ok) {
      stored += 1;
    } else {
      failed += 1;
    }
    if (running !== 0) {
      return;
    }
    if (failed === 0) {
      window.location.assign(uploadedPage());
    } else if (stored > 0 && !document.getElementById("uploads-done")) {
      // some files are in: the table above shows them after a reload, which would also clear
      // the errors below, so it is the publisher's choice
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.id = "uploads-done";
      link.href = uploadedPage();
      link.textContent = "Show the uploaded files";
      item.appendChild(link);
      list.appendChild(item);
    }
  }

  function upload(file) {
    var item = document.createElement("li");
    var name = document.createElement("span");
    name.textContent = file.name;
    var cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "Cancel";
    cancel.setAttribute("aria-label", "Cancel the upload of " + file.name);
    var bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", "Upload of " + file.name);
    var status = document.createElement("span");
    status.className = "status";
    status.textContent = "Waiting…";
    item.append(name, cancel, bar, status);
    list.appendChild(item);

    var body = new FormData();
    body.append("_csrf", token);  // before the file: the server checks it first
    body.append("attachment", file, file.name);
    var request = new XMLHttpRequest();
    request.open("POST", form.action);
    request.setRequestHeader("X-Forge-Console", "1");
    request.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) {
        var percent = Math.floor((event.loaded / event.total) * 100);
        bar.value = percent;
        status.textContent = percent + "% sent";
      }
    });
    function fail(message) {
      status.textContent = message;
      status.classList.add("failed");
      cancel.remove();
      finished(false);
    }
    request.addEventListener("load", function () {
      if (request.status === 201) {
        bar.value = 100;
        status.textContent = "Uploaded";
        cancel.remove();
        finished(true);
        return;
      }
      var message = "Upload failed (" + request.status + ")";
      try {
        message = JSON.parse(request.responseText).message || message;
      } catch (ignored) {
        // not our JSON (a proxy's page): keep the status
      }
      fail(message);
    });
    request.addEventListener("error", function () {
      fail("Upload failed: the connection was lost");
    });
    request.addEventListener("abort", function () {
      fail("Cancelled");
    });
    cancel.addEventListener("click", function () {
      request.abort();
    });
    running += 1;
    request.send(body);
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var files = Array.prototype.slice.call(input.files);
    failed = 0;
    stored = 0;
    files.forEach(upload);
    input.value = "";
  });
})();
