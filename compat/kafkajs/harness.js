// What the kafkajs case scripts share: each case prints "ok   kafkajs/<case>" or
// "FAIL kafkajs/<case>: detail", and the script exits non-zero if any failed.
let failures = 0;

function report(name, ok, detail = '') {
  if (ok) console.log(`ok   kafkajs/${name}`);
  else { failures++; console.log(`FAIL kafkajs/${name}: ${detail}`); }
}

// A case that throws is a failed case, not a crashed suite.
async function runCase(name, fn) {
  try { await fn(); } catch (e) { report(name, false, String(e && e.stack || e)); }
}

function finish() { process.exit(failures ? 1 : 0); }

function crashed(e) { console.log(`FAIL kafkajs/suite: ${e && e.stack || e}`); process.exit(1); }

module.exports = { report, runCase, finish, crashed };
