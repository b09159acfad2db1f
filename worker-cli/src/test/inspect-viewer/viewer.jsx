// The Inspect AI log viewer on a static page: logs are read over HTTP from ./logs/
// (listing.json and the log files beside it), as `inspect view` serves them.
import React from "react";
import { createRoot } from "react-dom/client";
import { App, clientApi, simpleHttpApi, initializeStore } from "@metrevals/inspect-log-viewer";
import "@metrevals/inspect-log-viewer/styles/index.css";

const api = clientApi(simpleHttpApi("logs"));
// Finished logs from a static folder: nothing streams, nothing to download, no worker scripts.
initializeStore(api, {
  downloadFiles: false,
  downloadLogs: false,
  webWorkers: false,
  streamSamples: false,
  streamSampleData: false,
});
createRoot(document.getElementById("app")).render(<App api={api} />);
