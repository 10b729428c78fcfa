// Validates glTF / GLB files with the Khronos glTF Validator (npm gltf-validator).
// Usage: node validate_gltf.js VALIDATOR_DIR FILE...; prints one JSON line per file:
// {"file", "errors", "warnings", "messages": [first errors]}; exit 0 unless it could not run.
"use strict";
const fs = require("fs");
const path = require("path");
const validator = require(path.resolve(process.argv[2]));

async function check(file) {
  const full = path.resolve(file);
  const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(full)), {
    uri: path.basename(full),
    maxIssues: 50,
    externalResourceFunction: (uri) =>
      new Promise((resolve, reject) => {
        fs.readFile(path.resolve(path.dirname(full), decodeURIComponent(uri)), (err, data) =>
          err ? reject(err.toString()) : resolve(data));
      }),
  });
  const messages = report.issues.messages
    .filter((m) => m.severity === 0)
    .slice(0, 10)
    .map((m) => `${m.code} ${m.pointer || ""} ${m.message}`);
  return { file, errors: report.issues.numErrors, warnings: report.issues.numWarnings, messages };
}

(async () => {
  for (const file of process.argv.slice(3)) {
    console.log(JSON.stringify(await check(file)));
  }
})().catch((err) => {
  console.error(String(err));
  process.exit(2);
});
