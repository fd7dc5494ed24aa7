// The Sluice console: a single page over the broker's JSON API (/api/v1, described at
// /api/v1/openapi.json). No framework and no network beyond this broker: views are rendered
// from the API's answers into #view, charts are drawn as SVG.
"use strict";

const view = document.getElementById("view");
let refresh = null;

function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

async function api(path, options = {}) {
  // From the origin: a page opened as http://user:password@host/ resolves relative URLs with
  // the credentials in them, which fetch refuses (the browser sends them by itself).
  const response = await fetch(new URL("/api/v1" + path, location.origin), {
    ...options,
    headers: options.body ? { "content-type": "application/json" } : {},
  });
  if (response.status === 204) return null;
  const body = await response.json().catch(() => ({ error: "UNKNOWN", message: response.statusText }));
  if (!response.ok) throw new Error(`${body.error}: ${body.message}`);
  return body;
}

function bytes(n) {
  if (n == null) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

function card(label, value, tone = "") {
  return `<div class="card ${tone}"><div class="label">${esc(label)}</div><div class="value">${esc(value)}</div></div>`;
}

function duration(seconds) {
  const d = Math.floor(seconds / 86400), h = Math.floor(seconds / 3600) % 24, m = Math.floor(seconds / 60) % 60;
  return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${seconds % 60}s`;
}

// A line chart of the given series ([{name, color, points: [[x, y]]}]) as SVG.
function chart(series, { width = 560, height = 160, unit = "" } = {}) {
  const all = series.flatMap((s) => s.points);
  if (all.length < 2) return `<p class="muted">Collecting samples (one every 5 s)…</p>`;
  const xs = all.map((p) => p[0]), ys = all.map((p) => p[1]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y1 = Math.max(1, ...ys);
  const pad = 30;
  const sx = (x) => pad + ((x - x0) / Math.max(1, x1 - x0)) * (width - pad - 8);
  const sy = (y) => height - 18 - (y / y1) * (height - 30);
  const lines = series.map((s) =>
    `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${s.points.map((p) => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(" ")}"/>`).join("");
  // Swatches as SVG (the page's content security policy allows no inline styles).
  const legend = series.map((s) => `<span><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" rx="2" fill="${s.color}"/></svg> ${esc(s.name)}</span>`).join("");
  return `<svg class="chart" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img">
    <text x="4" y="14" font-size="11" fill="#5d6878">${esc(y1.toFixed(y1 < 10 ? 1 : 0))} ${esc(unit)}</text>
    <line x1="${pad}" y1="${height - 18}" x2="${width - 8}" y2="${height - 18}" stroke="#dde3ea"/>
    <text x="${pad}" y="${height - 4}" font-size="11" fill="#5d6878">${new Date(x0).toLocaleTimeString()}</text>
    <text x="${width - 8}" y="${height - 4}" font-size="11" fill="#5d6878" text-anchor="end">${new Date(x1).toLocaleTimeString()}</text>
    ${lines}</svg><div class="legend">${legend}</div>`;
}

async function throughputCharts(topic) {
  const data = await api("/throughput");
  const points = data.topics[topic] || [];
  const pick = (field) => points.map((p) => [p.at, p[field]]);
  return `<div class="cards">
    <div>${chart([{ name: "messages in /s", color: "#1f6feb", points: pick("messages_in_per_sec") }], { unit: "msg/s" })}</div>
    <div>${chart([
      { name: "bytes in /s", color: "#2e7d32", points: pick("bytes_in_per_sec") },
      { name: "bytes out /s", color: "#e07b00", points: pick("bytes_out_per_sec") },
    ], { unit: "B/s" })}</div></div>`;
}

async function overview() {
  const c = await api("/cluster");
  await header(c);
  const brokers = c.brokers.map((b) => `<tr data-broker="${b.id}"><td>${b.id}${b.id === c.controller_id ? " (controller)" : ""}</td>
    <td>${b.endpoints.map(esc).join("<br>")}</td><td>${esc(b.rack ?? "–")}</td>
    <td>${b.fenced ? '<span class="error">fenced</span>' : "active"}${b.in_controlled_shutdown ? ", shutting down" : ""}</td></tr>`).join("");
  view.innerHTML = `<h1>Overview</h1>
    <div class="cards" id="health">
      ${card("Brokers", c.brokers.length)}
      ${card("Controller", c.controller_id < 0 ? "none" : c.controller_id, c.controller_id < 0 ? "bad" : "")}
      ${card("Topics", c.topics)}
      ${card("Partitions", c.partitions)}
      ${card("Under-replicated", c.under_replicated_partitions, c.under_replicated_partitions ? "bad" : "good")}
      ${card("Offline", c.offline_partitions, c.offline_partitions ? "bad" : "good")}
      ${card("Version", c.version)}
      ${card("Uptime", duration(c.uptime_seconds))}
    </div>
    <h2>Brokers</h2>
    <table><thead><tr><th>Id</th><th>Endpoints</th><th>Rack</th><th>State</th></tr></thead><tbody>${brokers}</tbody></table>
    <h2>All topics, last minutes</h2><div id="charts">${await throughputCharts("")}</div>`;
  refresh = async () => { document.getElementById("charts").innerHTML = await throughputCharts(""); };
}

async function topics() {
  const list = await api("/topics");
  const rows = list.map((t) => `<tr data-topic="${esc(t.name)}"><td><a href="#/topics/${encodeURIComponent(t.name)}">${esc(t.name)}</a>${t.internal ? ' <span class="muted">internal</span>' : ""}</td>
    <td class="num">${t.partitions}</td><td class="num">${t.replication_factor}</td>
    <td class="num">${t.under_replicated_partitions}</td><td class="num">${t.messages}</td><td class="num">${bytes(t.size_bytes)}</td></tr>`).join("");
  view.innerHTML = `<h1>Topics</h1>
    <form class="inline" id="create-topic">
      <label>Name <input name="name" required></label>
      <label>Partitions <input name="partitions" type="number" min="1" value="1"></label>
      <label>Replication factor <input name="replication_factor" type="number" min="1" placeholder="default"></label>
      <button type="submit">Create topic</button>
    </form><div id="create-result"></div>
    <table id="topics"><thead><tr><th>Name</th><th class="num">Partitions</th><th class="num">Replicas</th>
    <th class="num">Under-replicated</th><th class="num">Messages</th><th class="num">Size here</th></tr></thead><tbody>${rows}</tbody></table>`;
  document.getElementById("create-topic").onsubmit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const body = { name: form.get("name"), partitions: Number(form.get("partitions") || -1) };
    if (form.get("replication_factor")) body.replication_factor = Number(form.get("replication_factor"));
    try {
      await api("/topics", { method: "POST", body: JSON.stringify(body) });
      location.hash = `#/topics/${encodeURIComponent(body.name)}`;
    } catch (e) {
      document.getElementById("create-result").innerHTML = `<p class="error">${esc(e.message)}</p>`;
    }
  };
}

function render(bytesValue, format) {
  if (!bytesValue) return '<span class="muted">null</span>';
  const raw = atob(bytesValue.base64);
  if (format === "hex") {
    return esc([...raw].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join(" "));
  }
  if (format === "json" && bytesValue.text != null) {
    try { return esc(JSON.stringify(JSON.parse(bytesValue.text), null, 2)); } catch (_) { /* not JSON: as text */ }
  }
  return bytesValue.text != null ? esc(bytesValue.text) : `<span class="muted">${bytesValue.size} bytes, not UTF-8</span> ${esc(btoa(raw))}`;
}

async function browse(name, query, format) {
  const params = new URLSearchParams({ partition: query.partition, limit: query.limit });
  if (query.mode === "offset" && query.from !== "") params.set("offset", query.from);
  if (query.mode === "timestamp" && query.from !== "") params.set("timestamp", String(Date.parse(query.from)));
  const page = await api(`/topics/${encodeURIComponent(name)}/messages?${params}`);
  const rows = page.records.map((r) => `<tr data-offset="${r.offset}"><td class="num">${r.offset}</td>
    <td>${new Date(r.timestamp).toISOString()}<br><span class="muted">${r.timestamp_type}</span></td>
    <td><pre class="payload">${render(r.key, format)}</pre></td><td><pre class="payload">${render(r.value, format)}</pre></td>
    <td>${r.headers.map((h) => `${esc(h.key)}: ${render(h.value, format)}`).join("<br>")}</td></tr>`).join("");
  document.getElementById("messages").innerHTML = `<p class="muted">${page.records.length} records; high watermark ${page.high_watermark}; next offset ${page.next_offset}</p>
    <table><thead><tr><th class="num">Offset</th><th>Timestamp</th><th>Key</th><th>Value</th><th>Headers</th></tr></thead><tbody>${rows}</tbody></table>`;
  const blob = new Blob([JSON.stringify(page, null, 2)], { type: "application/json" });
  const link = document.getElementById("download");
  link.href = URL.createObjectURL(blob);
  link.download = `${name}-${query.partition}-${page.records[0]?.offset ?? "empty"}.json`;
  link.hidden = false;
}

async function topic(name) {
  const t = await api(`/topics/${encodeURIComponent(name)}`);
  const partitions = t.partitions.map((p) => `<tr data-partition="${p.partition}"><td class="num">${p.partition}</td><td class="num">${p.leader < 0 ? '<span class="error">none</span>' : p.leader}</td>
    <td>${p.replicas.join(", ")}</td><td>${p.isr.join(", ")}</td><td class="num">${p.log_start_offset ?? "–"}</td>
    <td class="num">${p.high_watermark ?? "–"}</td><td class="num">${bytes(p.size_bytes)}</td></tr>`).join("");
  const configs = t.configs == null
    ? '<tr><td colspan="3" class="muted">Not shown: DESCRIBE_CONFIGS on this topic is not allowed.</td></tr>'
    : t.configs.map((c) => `<tr><td>${esc(c.name)}</td><td>${esc(c.value ?? "null")}</td><td class="muted">${c.source}</td></tr>`).join("");
  const options = t.partitions.map((p) => `<option value="${p.partition}">${p.partition}</option>`).join("");
  view.innerHTML = `<h1>Topic ${esc(t.name)}</h1>
    <p class="muted">id ${esc(t.id)}</p>
    <h2>Last minutes</h2><div id="charts">${await throughputCharts(t.name)}</div>
    <h2>Partitions</h2>
    <table id="partitions"><thead><tr><th class="num">Partition</th><th class="num">Leader</th><th>Replicas</th><th>In sync</th>
    <th class="num">Start offset</th><th class="num">High watermark</th><th class="num">Size here</th></tr></thead><tbody>${partitions}</tbody></table>
    <h2>Messages</h2>
    <form class="inline" id="browse">
      <label>Partition <select name="partition">${options}</select></label>
      <label>From <select name="mode"><option value="offset">offset</option><option value="timestamp">timestamp</option></select></label>
      <label>Offset or time <input name="from" placeholder="start of the log"></label>
      <label>Limit <input name="limit" type="number" min="1" max="500" value="50"></label>
      <label>Show as <select name="format"><option value="text">text</option><option value="json">JSON</option><option value="hex">hex</option></select></label>
      <button type="submit">Read</button> <a id="download" hidden>Download JSON</a>
    </form><div id="messages"></div>
    <h2>Configs</h2>
    <form class="inline" id="alter-config">
      <label>Config <input name="name" required placeholder="retention.ms"></label>
      <label>Value <input name="value" placeholder="empty: back to default"></label>
      <button type="submit">Set</button>
    </form><div id="config-result"></div>
    <table id="configs"><thead><tr><th>Name</th><th>Value</th><th>Source</th></tr></thead><tbody>${configs}</tbody></table>
    <h2>Producers</h2><div id="producers">${await producers(t.name)}</div>
    <h2>Delete</h2>
    <form class="inline" id="delete-topic">
      <label>Type the topic's name to confirm <input name="confirm" required></label>
      <button class="danger" type="submit">Delete topic</button>
    </form><div id="delete-result"></div>`;
  const readForm = document.getElementById("browse");
  readForm.onsubmit = async (event) => {
    event.preventDefault();
    const form = new FormData(readForm);
    try {
      await browse(t.name, { partition: form.get("partition"), mode: form.get("mode"), from: form.get("from"), limit: form.get("limit") }, form.get("format"));
    } catch (e) {
      document.getElementById("messages").innerHTML = `<p class="error">${esc(e.message)}</p>`;
    }
  };
  document.getElementById("alter-config").onsubmit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const value = form.get("value");
    try {
      await api(`/topics/${encodeURIComponent(t.name)}/configs`, { method: "PUT", body: JSON.stringify({ configs: { [form.get("name")]: value === "" ? null : value } }) });
      await topic(name);
    } catch (e) {
      document.getElementById("config-result").innerHTML = `<p class="error">${esc(e.message)}</p>`;
    }
  };
  document.getElementById("delete-topic").onsubmit = async (event) => {
    event.preventDefault();
    const confirmed = new FormData(event.target).get("confirm");
    const result = document.getElementById("delete-result");
    if (confirmed !== t.name) { result.innerHTML = `<p class="error">The name typed is not ${esc(t.name)}.</p>`; return; }
    try {
      await api(`/topics/${encodeURIComponent(t.name)}`, { method: "DELETE" });
      location.hash = "#/topics";
    } catch (e) {
      result.innerHTML = `<p class="error">${esc(e.message)}</p>`;
    }
  };
  refresh = async () => { document.getElementById("charts").innerHTML = await throughputCharts(t.name); };
}

// The idempotent and transactional producers each partition's leader knows.
async function producers(topicName) {
  let partitions;
  try { partitions = await api(`/topics/${encodeURIComponent(topicName)}/producers`); }
  catch (e) { return `<p class="muted">${esc(e.message)}</p>`; }
  const rows = partitions.flatMap((p) => (p.producers ?? []).map((r) => `<tr><td class="num">${p.partition}</td><td class="num">${r.producer_id}</td>
    <td class="num">${r.producer_epoch}</td><td class="num">${r.last_sequence}</td><td>${r.last_timestamp < 0 ? "–" : new Date(r.last_timestamp).toISOString()}</td>
    <td class="num">${r.current_txn_start_offset < 0 ? "–" : r.current_txn_start_offset}</td></tr>`)).join("");
  return rows ? `<table id="producer-table"><thead><tr><th class="num">Partition</th><th class="num">Producer id</th><th class="num">Epoch</th>
    <th class="num">Last sequence</th><th>Last write</th><th class="num">Open transaction from</th></tr></thead><tbody>${rows}</tbody></table>`
    : '<p class="muted">No idempotent or transactional producer has written here.</p>';
}

async function groups() {
  const [list, shares] = await Promise.all([api("/groups"), api("/share-groups")]);
  const rows = list.map((g) => `<tr data-group="${esc(g.group_id)}"><td><a href="#/groups/${encodeURIComponent(g.group_id)}">${esc(g.group_id)}</a></td>
    <td>${g.group_type}</td><td>${esc(g.state)}</td><td class="num">${g.members}</td><td class="num lag">${g.lag}</td></tr>`).join("");
  const shareRows = shares.map((g) => `<tr data-share-group="${esc(g.group_id)}"><td><a href="#/share-groups/${encodeURIComponent(g.group_id)}">${esc(g.group_id)}</a></td>
    <td>${esc(g.state)}</td><td class="num">${g.members}</td><td class="num lag">${g.lag}</td></tr>`).join("");
  view.innerHTML = `<h1>Consumer groups</h1>
    <table id="groups"><thead><tr><th>Group</th><th>Type</th><th>State</th><th class="num">Members</th><th class="num">Lag</th></tr></thead><tbody>${rows}</tbody></table>
    <h2>Share groups</h2>
    ${shares.length ? `<table id="share-groups"><thead><tr><th>Group</th><th>State</th><th class="num">Members</th><th class="num">Lag</th></tr></thead><tbody>${shareRows}</tbody></table>`
      : '<p class="muted">No share groups.</p>'}`;
  refresh = groups;
}

async function shareGroup(id) {
  const g = await api(`/share-groups/${encodeURIComponent(id)}`);
  const assignment = (a) => Object.entries(a).map(([t, ps]) => `${esc(t)}: ${ps.join(", ")}`).join("<br>");
  const members = g.members.map((m) => `<tr><td>${esc(m.member_id)}</td><td>${esc(m.client_id)}</td><td>${esc(m.client_host)}</td>
    <td>${m.subscribed_topics.map(esc).join(", ")}</td><td>${assignment(m.assignment)}</td></tr>`).join("");
  const offsets = g.offsets.map((o) => `<tr><td>${esc(o.topic)}</td><td class="num">${o.partition}</td><td class="num">${o.start_offset}</td>
    <td class="num lag">${o.lag < 0 ? "–" : o.lag}</td></tr>`).join("");
  view.innerHTML = `<h1>Share group ${esc(g.group_id)}</h1>
    <div class="cards">${card("State", g.state)}${card("Members", g.members.length)}${card("Group epoch", g.group_epoch)}
    ${card("Lag", g.offsets.reduce((sum, o) => sum + Math.max(0, o.lag), 0))}</div>
    <h2>Members</h2>
    <table><thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Subscribed</th><th>Assignment</th></tr></thead><tbody>${members}</tbody></table>
    <h2>Share-partitions</h2>
    <table id="share-offsets"><thead><tr><th>Topic</th><th class="num">Partition</th><th class="num">Start offset</th><th class="num">Lag</th></tr></thead><tbody>${offsets}</tbody></table>
    ${g.members.length === 0 ? `<h2>Delete</h2><form class="inline" id="delete-share-group">
      <label>Type the group's id to confirm <input name="confirm" required></label>
      <button class="danger" type="submit">Delete share group</button></form>` : ""}
    <div id="group-result"></div>`;
  const form = document.getElementById("delete-share-group");
  if (form) {
    form.onsubmit = async (event) => {
      event.preventDefault();
      const result = document.getElementById("group-result");
      if (new FormData(event.target).get("confirm") !== id) { result.innerHTML = `<p class="error">The id typed is not ${esc(id)}.</p>`; return; }
      try { await api(`/share-groups/${encodeURIComponent(id)}`, { method: "DELETE" }); location.hash = "#/groups"; }
      catch (e) { result.innerHTML = `<p class="error">${esc(e.message)}</p>`; }
    };
  }
  refresh = () => shareGroup(id);
}

async function transactions() {
  const list = await api("/transactions");
  const rows = list.map((t) => `<tr data-transactional-id="${esc(t.transactional_id)}"><td>${esc(t.transactional_id)}</td><td>${esc(t.state)}</td>
    <td class="num">${t.producer_id}</td><td class="num">${t.producer_epoch}</td><td class="num">${t.timeout_ms}</td>
    <td>${t.start_ms < 0 ? "–" : new Date(t.start_ms).toISOString()}</td>
    <td>${Object.entries(t.partitions).map(([topicName, ps]) => `${esc(topicName)}: ${ps.join(", ")}`).join("<br>")}</td></tr>`).join("");
  view.innerHTML = `<h1>Transactions</h1>
    ${list.length ? `<table id="transactions"><thead><tr><th>Transactional id</th><th>State</th><th class="num">Producer id</th><th class="num">Epoch</th>
    <th class="num">Timeout ms</th><th>Started</th><th>Partitions</th></tr></thead><tbody>${rows}</tbody></table>`
      : '<p class="muted">No transactional ids.</p>'}
    <p class="muted">The producers of each partition, with where an open transaction starts, are on the topic's page.</p>`;
  refresh = transactions;
}

const ACL_FIELDS = ["resource_type", "resource_name", "pattern_type", "principal", "host", "operation", "permission"];

function options(values, selected) {
  return values.map((v) => `<option${v === selected ? " selected" : ""}>${v}</option>`).join("");
}

async function security() {
  let acls, users;
  try { [acls, users] = await Promise.all([api("/acls"), api("/users")]); }
  catch (e) { view.innerHTML = `<h1>ACLs and users</h1><p class="error">${esc(e.message)}</p>`; return; }
  const aclRows = acls.map((a, i) => `<tr data-acl="${i}">${ACL_FIELDS.map((f) => `<td>${esc(a[f])}</td>`).join("")}
    <td><button class="danger" data-delete-acl="${i}">Delete</button></td></tr>`).join("");
  const userRows = users.map((u) => `<tr data-user="${esc(u.user)}"><td>${esc(u.user)}</td>
    <td>${u.credentials.map((c) => `${c.mechanism} (${c.iterations} iterations) <button class="danger" data-delete-user="${esc(u.user)}" data-mechanism="${c.mechanism}">Delete</button>`).join("<br>")}</td></tr>`).join("");
  view.innerHTML = `<h1>ACLs</h1>
    <form class="inline" id="create-acl">
      <label>Resource <select name="resource_type">${options(["TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "USER"], "TOPIC")}</select></label>
      <label>Name <input name="resource_name" required placeholder="orders"></label>
      <label>Pattern <select name="pattern_type">${options(["LITERAL", "PREFIXED"], "LITERAL")}</select></label>
      <label>Principal <input name="principal" required placeholder="User:alice"></label>
      <label>Host <input name="host" value="*" required></label>
      <label>Operation <select name="operation">${options(["ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "TWO_PHASE_COMMIT"], "READ")}</select></label>
      <label>Permission <select name="permission">${options(["ALLOW", "DENY"], "ALLOW")}</select></label>
      <button type="submit">Add ACL</button>
    </form><div id="acl-result"></div>
    <table id="acls"><thead><tr><th>Resource</th><th>Name</th><th>Pattern</th><th>Principal</th><th>Host</th><th>Operation</th><th>Permission</th><th></th></tr></thead>
    <tbody>${aclRows}</tbody></table>
    <h2>SCRAM users</h2>
    <form class="inline" id="set-user">
      <label>User <input name="user" required></label>
      <label>Mechanism <select name="mechanism">${options(["SCRAM-SHA-256", "SCRAM-SHA-512"], "SCRAM-SHA-256")}</select></label>
      <label>Password <input name="password" type="password" required autocomplete="new-password"></label>
      <button type="submit">Set password</button>
    </form><div id="user-result"></div>
    <table id="users"><thead><tr><th>User</th><th>Credentials</th></tr></thead><tbody>${userRows}</tbody></table>`;
  const fail = (id) => (e) => { document.getElementById(id).innerHTML = `<p class="error">${esc(e.message)}</p>`; };
  document.getElementById("create-acl").onsubmit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const body = Object.fromEntries(ACL_FIELDS.map((f) => [f, form.get(f)]));
    try { await api("/acls", { method: "POST", body: JSON.stringify(body) }); await security(); } catch (e) { fail("acl-result")(e); }
  };
  document.getElementById("set-user").onsubmit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    try {
      await api(`/users/${encodeURIComponent(form.get("user"))}`, { method: "PUT", body: JSON.stringify({ mechanism: form.get("mechanism"), password: form.get("password") }) });
      await security();
    } catch (e) { fail("user-result")(e); }
  };
  view.querySelectorAll("[data-delete-acl]").forEach((button) => {
    button.onclick = async () => {
      const acl = acls[Number(button.dataset.deleteAcl)];
      try { await api(`/acls?${new URLSearchParams(acl)}`, { method: "DELETE" }); await security(); } catch (e) { fail("acl-result")(e); }
    };
  });
  view.querySelectorAll("[data-delete-user]").forEach((button) => {
    button.onclick = async () => {
      const params = new URLSearchParams({ mechanism: button.dataset.mechanism });
      try { await api(`/users/${encodeURIComponent(button.dataset.deleteUser)}?${params}`, { method: "DELETE" }); await security(); } catch (e) { fail("user-result")(e); }
    };
  });
}

async function group(id) {
  const g = await api(`/groups/${encodeURIComponent(id)}`);
  const members = g.members.map((m) => `<tr><td>${esc(m.member_id)}</td><td>${esc(m.client_id)}</td><td>${esc(m.client_host)}</td>
    <td>${Object.entries(m.assignment).map(([t, ps]) => `${esc(t)}: ${ps.join(", ")}`).join("<br>")}</td></tr>`).join("");
  const offsets = g.offsets.map((o) => `<tr data-partition="${esc(o.topic)}-${o.partition}"><td>${esc(o.topic)}</td><td class="num">${o.partition}</td>
    <td class="num">${o.committed}</td><td class="num">${o.high_watermark ?? "–"}</td><td class="num lag">${o.lag ?? "–"}</td></tr>`).join("");
  const empty = g.members.length === 0;
  view.innerHTML = `<h1>Group ${esc(g.group_id)}</h1>
    <div class="cards">${card("Type", g.group_type)}${card("State", g.state)}${card("Members", g.members.length)}
    ${card("Lag", g.offsets.reduce((sum, o) => sum + (o.lag ?? 0), 0))}</div>
    <h2>Members</h2>
    <table><thead><tr><th>Member</th><th>Client</th><th>Host</th><th>Assignment</th></tr></thead><tbody>${members}</tbody></table>
    <h2>Offsets</h2>
    <table id="offsets"><thead><tr><th>Topic</th><th class="num">Partition</th><th class="num">Committed</th><th class="num">High watermark</th><th class="num">Lag</th></tr></thead><tbody>${offsets}</tbody></table>
    ${empty ? `<h2>Reset offsets</h2>
    <form class="inline" id="reset">
      <label>Topic <input name="topic" required></label>
      <label>To <select name="to"><option>earliest</option><option>latest</option><option>offset</option></select></label>
      <label>Offset <input name="offset" type="number" min="0"></label>
      <button type="submit">Reset</button>
    </form>
    <h2>Delete</h2>
    <form class="inline" id="delete-group">
      <label>Type the group's id to confirm <input name="confirm" required></label>
      <button class="danger" type="submit">Delete group</button>
    </form>` : '<p class="muted">Offsets can be reset and the group deleted once it has no members.</p>'}
    <div id="group-result"></div>`;
  const result = document.getElementById("group-result");
  if (empty) {
    document.getElementById("reset").onsubmit = async (event) => {
      event.preventDefault();
      const form = new FormData(event.target);
      const body = { topic: form.get("topic"), to: form.get("to") };
      if (body.to === "offset") body.offset = Number(form.get("offset"));
      try { await api(`/groups/${encodeURIComponent(id)}/offsets`, { method: "POST", body: JSON.stringify(body) }); await group(id); }
      catch (e) { result.innerHTML = `<p class="error">${esc(e.message)}</p>`; }
    };
    document.getElementById("delete-group").onsubmit = async (event) => {
      event.preventDefault();
      if (new FormData(event.target).get("confirm") !== id) { result.innerHTML = `<p class="error">The id typed is not ${esc(id)}.</p>`; return; }
      try { await api(`/groups/${encodeURIComponent(id)}`, { method: "DELETE" }); location.hash = "#/groups"; }
      catch (e) { result.innerHTML = `<p class="error">${esc(e.message)}</p>`; }
    };
  }
  refresh = () => group(id);
}

// The header: which cluster, which broker, who is asking.
async function header(c) {
  c = c ?? await api("/cluster");
  document.getElementById("cluster-name").textContent = `cluster ${c.cluster_id} · broker ${c.node_id} · ${c.principal}`;
}

async function route() {
  refresh = null;
  if (!document.getElementById("cluster-name").textContent) header().catch(() => {});
  const [, page, arg] = location.hash.replace(/^#/, "").split("/");
  const nav = page === "share-groups" ? "groups" : page || "overview";
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === nav));
  try {
    if (page === "topics" && arg) await topic(decodeURIComponent(arg));
    else if (page === "topics") await topics();
    else if (page === "groups" && arg) await group(decodeURIComponent(arg));
    else if (page === "groups") await groups();
    else if (page === "share-groups" && arg) await shareGroup(decodeURIComponent(arg));
    else if (page === "transactions") await transactions();
    else if (page === "security") await security();
    else await overview();
  } catch (e) {
    view.innerHTML = `<p class="error">${esc(e.message)}</p>`;
  }
  document.body.dataset.ready = location.hash || "#/";
}

window.addEventListener("hashchange", route);
setInterval(async () => {
  // Forms being filled in are not wiped by a refresh.
  if (refresh && !view.contains(document.activeElement)) {
    try { await refresh(); } catch (_) { /* shown on the next navigation */ }
  }
}, 5000);
route();
