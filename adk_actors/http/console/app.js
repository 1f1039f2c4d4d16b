// The adk-actors console: chat over /run_sse, sessions, state, artifacts, approvals, interrupted runs,
// background jobs and the live supervision tree. Plain JavaScript against the host's HTTP API.
"use strict";

const $ = (id) => document.getElementById(id);
const ui = {
  app: null, session: null, operator: false, busy: false,
  user: localStorage.getItem("adk-user") || "user",
  token: localStorage.getItem("adk-token") || "",
};

function element(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  if (ui.token) headers.authorization = `Bearer ${ui.token}`;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    options.body = JSON.stringify(options.json);
  }
  // No answer within SLOW_MS (the HTTP process stopped or restarting: requests wait in its
  // port's backlog), or no answer at all (the connection dropped): the banner says so. A
  // patient request (a walk of the tree: it waits for a busy partition) sets no timer.
  const slow = options.patient ? null : setTimeout(() => connection(false), SLOW_MS);
  let response;
  try { response = await fetch(path, { ...options, headers }); } catch (error) {
    connection(false);
    throw new Error("the host does not answer: reconnecting…");
  } finally { clearTimeout(slow); }
  connection(true);
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail || detail; } catch (_) { /* not JSON */ }
    throw new Error(`${response.status}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  }
  return options.raw ? response : response.json();
}

// The banner above the page: "reconnecting…" while requests get no answer (the HTTP
// process restarting), and the actors of the tree that are restarting; gone when all is well.
const banner = { lost: false, restarting: [], broken: [] };
const SLOW_MS = 3000;

function connection(answered) {
  if (banner.lost === !answered) return;
  banner.lost = !answered;
  showBanner();
}

function showBanner() {
  const lines = [];
  if (banner.lost) lines.push("The host does not answer: reconnecting… (its HTTP process may be restarting)");
  if (banner.restarting.length) lines.push(`Restarting: ${banner.restarting.join(", ")}`);
  lines.push(...banner.broken);
  $("banner").textContent = lines.join(" · ");
  $("banner").hidden = !lines.length;
}

// An agent folder whose current files do not import (adk-actors web DIR): its error, in the
// banner, until a save fixes it (its last good version serves meanwhile).
async function refreshAppErrors() {
  const { apps } = await api("/list-apps?detailed=true");
  const broken = apps.filter((app) => app.loadError).map((app) => `App ${app.name} does not load: ${app.loadError}`);
  if (broken.join("\n") === banner.broken.join("\n")) return;
  banner.broken = broken;
  showBanner();
}

// The state as the user wrote it: the keys of the kit and of google-adk ("__"-prefixed,
// such as __session_metadata__) are not shown.
const visibleState = (state) => Object.fromEntries(Object.entries(state || {}).filter(([key]) => !key.startsWith("__")));

// A conversation's title: the name it was given, else its first message, else (nothing said
// yet) its id.
function conversationTitle(session) {
  const named = session.state && session.state.__session_metadata__ && session.state.__session_metadata__.displayName;
  if (named) return named;
  for (const event of session.events || []) {
    const text = event.author === "user" && event.content && (event.content.parts || []).map((p) => p.text || "").join("").trim();
    if (text) return text.length > 60 ? `${text.slice(0, 60)}…` : text;
  }
  return `Session ${session.id}`;
}

function remember() {  // the page's URL names the app and session, so a reload comes back to them
  const params = new URLSearchParams({ app: ui.app });
  if (ui.session) params.set("session", ui.session);
  history.replaceState(null, "", `?${params}`);
}

const base = () => `/apps/${encodeURIComponent(ui.app)}/users/${encodeURIComponent(ui.user)}`;

// -- conversation ---------------------------------------------------------------------

const live = new Map(); // event id -> the <li> showing a streamed answer

function describeCall(call) {
  return `→ ${call.name}(${JSON.stringify(call.args || {})})`;
}

function renderEvent(event) {
  const parts = (event.content && event.content.parts) || [];
  const fromUser = event.author === "user" && !parts.some((p) => p.functionResponse);
  const item = element("li", { class: fromUser ? "from-user" : "from-agent", "data-event": event.id });
  item.append(element("span", { class: "author" }, event.author));
  if (event.errorCode) {
    item.classList.add("error");
    item.append(element("div", { class: "bubble" }, `${event.errorCode}: ${event.errorMessage || ""}`));
  }
  for (const part of parts) {
    if (part.text && !part.thought) item.append(element("div", { class: "bubble" }, part.text));
    if (part.functionCall && isQuestion(part.functionCall, event)) item.append(questionBox(part.functionCall, event));
    else if (part.functionCall) item.append(element("div", { class: "tool" }, describeCall(part.functionCall)));
    if (part.functionResponse) {
      const fr = part.functionResponse;
      item.append(element("div", { class: "tool" }, `← ${fr.name}: ${JSON.stringify(fr.response)}`));
    }
  }
  const actions = event.actions || {};
  if (actions.transferToAgent) item.append(element("div", { class: "transfer" }, `⇢ transfer to ${actions.transferToAgent}`));
  for (const [callId, config] of Object.entries(actions.requestedAuthConfigs || {})) {
    item.append(credentialForm(callId, config));
  }
  if (!event.content && event.output !== undefined && event.output !== null && event.nodeInfo) {
    item.append(element("div", { class: "tool" }, `${event.nodeInfo.path} ⇒ ${JSON.stringify(event.output)}`));
  }
  if (!event.content && !event.errorCode && actions.stateDelta && Object.keys(actions.stateDelta).length) {
    item.append(element("div", { class: "tool" }, `state ← ${JSON.stringify(actions.stateDelta)}`));
  }
  return item;
}

// -- questions of workflow nodes (RequestInput): an adk_request_input call the run waits on ----

const QUESTION = "adk_request_input";
const isQuestion = (call, event) => call.name === QUESTION && (event.longRunningToolIds || []).includes(call.id);

// The inputs of an answer as its JSON schema asks: a field per property of an object (a
// checkbox, a number or a text; JSON for a list or an object), one field for a plain
// type, else one text (JSON or text). Returns [fields, read]: read() gives the answer.
function answerFields(schema, label) {
  const field = (spec, name) => {
    const type = spec && spec.type;
    if (type === "boolean") return element("input", { type: "checkbox", "aria-label": name });
    if (type === "integer" || type === "number") {
      return element("input", { type: "number", step: type === "integer" ? "1" : "any", "aria-label": name });
    }
    if (type === "string") return element("input", { type: "text", "aria-label": name });
    return element("textarea", { rows: "2", "aria-label": name, placeholder: "JSON, or text" });
  };
  const value = (input, spec) => {
    if (input.type === "checkbox") return input.checked;
    if (input.type === "number") return input.value === "" ? null : Number(input.value);
    if (spec && spec.type === "string") return input.value;
    try { return JSON.parse(input.value); } catch (_) { return input.value; }  // text as it is
  };
  const properties = schema && schema.type === "object" && schema.properties;
  if (properties) {
    const required = new Set(schema.required || []);
    const inputs = Object.entries(properties).map(([name, spec]) => [name, spec, field(spec, name)]);
    for (const [name, , input] of inputs) if (required.has(name) && input.type !== "checkbox") input.required = true;
    const rows = inputs.map(([name, spec, input]) => element("label", { class: "answer-field" },
      `${name}${required.has(name) ? "" : " (optional)"}`, input));
    const read = () => Object.fromEntries(inputs.filter(([, , input]) => input.type === "checkbox" || input.value !== "")
      .map(([name, spec, input]) => [name, value(input, spec)]));
    return [rows, read];
  }
  const input = field(schema, label);
  if (input.type !== "checkbox") input.required = true;
  return [[input], () => value(input, schema)];
}

// A question in the conversation: its message, payload and an answer form; the answer is
// sent as adk-web sends it (a functionResponse with the question's id) and the graph goes on.
function questionBox(call, event) {
  const args = call.args || {};
  const box = element("div", { class: "question", "data-interrupt": call.id, "data-asked-in": event.id },
    element("div", { class: "bubble" }, args.message || "Input requested"));
  if (args.payload !== undefined && args.payload !== null) {
    box.append(element("pre", { class: "payload" }, JSON.stringify(args.payload, null, 2)));
  }
  const [fields, read] = answerFields(args.response_schema, `answer to ${call.id}`);
  const form = element("form", { class: "answer" }, ...fields,
    element("button", { type: "submit", class: "primary" }, "Answer"), element("span", { class: "muted form-error" }));
  form.addEventListener("submit", (e) => { e.preventDefault(); answerQuestion(box, call.id, read()); });
  box.append(form);
  return box;
}

async function answerQuestion(box, interruptId, value) {
  if (ui.busy) return;
  ui.busy = true;
  $("send").disabled = true;
  const form = box.querySelector("form");
  for (const input of form.elements) input.disabled = true;
  showEvent({ author: "user", id: `local-${Date.now()}`, content: { role: "user", parts: [{ functionResponse:
    { id: interruptId, name: QUESTION, response: { result: value } } }] } });
  let failure = null;
  try {
    const response = await api("/run_sse", { method: "POST", raw: true, json: {
      appName: ui.app, userId: ui.user, sessionId: ui.session, streaming: $("streaming").checked,
      newMessage: { role: "user", parts: [{ functionResponse: { id: interruptId, name: QUESTION,
        response: { result: value } } }] } } });
    failure = await streamRun(response);
  } catch (error) {
    failure = { error: error.message };
    showEvent({ author: "host", id: `error-${Date.now()}`, errorCode: "error", errorMessage: error.message });
  } finally {
    ui.busy = false;
    $("send").disabled = false;
    if (failure) form.querySelector(".form-error").textContent = ` not taken: ${failure.error}`;
    await Promise.all([loadSessions(), refreshDetails()]);
  }
}

// The questions the session still waits for (the host's /inputs): their forms stay open;
// every other question shown is answered: its form goes.
async function refreshQuestions() {
  const boxes = [...$("events").querySelectorAll(".question")];
  if (!ui.session || !boxes.length) return;
  let waiting = [];
  try { waiting = await api(`${base()}/sessions/${encodeURIComponent(ui.session)}/inputs`); } catch (_) { return; }
  const open = new Set(waiting.map((w) => `${w.eventId}/${w.interruptId}`));
  for (const box of boxes) {
    const form = box.querySelector("form");
    if (open.has(`${box.dataset.askedIn}/${box.dataset.interrupt}`)) {
      if (form) for (const input of form.elements) input.disabled = false;
    } else if (form) {
      form.replaceWith(element("div", { class: "muted answered" }, "answered"));
    }
  }
}

function credentialForm(callId, config) {
  const key = config.credential_key || config.credentialKey || callId;
  const input = element("input", { type: "password", placeholder: "access token", "aria-label": `token for ${key}` });
  const form = element("form", { class: "credential" },
    element("div", {}, `The agent needs your credential "${key}". Paste a token, then ask again.`), input,
    element("button", { type: "submit" }, "Store credential"));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    await api(`${base()}/credentials/${encodeURIComponent(key)}`,
      { method: "PUT", json: { accessToken: input.value, expiresIn: 3600 } });
    form.replaceWith(element("div", { class: "muted" }, `credential "${key}" stored`));
  });
  return form;
}

function showEvent(event) {
  const list = $("events");
  const text = event.partial ? ((event.content && event.content.parts) || []).map((p) => p.text || "").join("") : null;
  if (event.partial) {
    let item = live.get(event.id);
    if (!item) {
      item = element("li", { class: "from-agent partial", "data-event": event.id },
        element("span", { class: "author" }, event.author), element("div", { class: "bubble" }, ""));
      live.set(event.id, item);
      list.append(item);
    }
    item.querySelector(".bubble").textContent += text;
  } else {
    const earlier = list.querySelector(`li[data-event="${CSS.escape(event.id)}"]:not(.partial)`);
    if (earlier && !event.content) {
      // google-adk's SSE sends an event with an artifactDelta twice: this is the delta's half.
      for (const [name, version] of Object.entries((event.actions || {}).artifactDelta || {})) {
        earlier.append(element("div", { class: "tool" }, `artifact ${name} v${version} saved`));
      }
      return;
    }
    const item = renderEvent(event);
    const streamed = live.get(event.id);
    if (streamed) { streamed.replaceWith(item); live.delete(event.id); } else list.append(item);
  }
  list.scrollTop = list.scrollHeight;
}

// Show a run's SSE stream in the conversation, as it comes; answer its error line (or null).
async function streamRun(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let failure = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!frame.startsWith("data: ")) continue;
      const data = JSON.parse(frame.slice(6));
      if (data.error) {
        failure = data;
        const pending = (data.error_details || {}).pending_calls;
        showEvent({ author: "host", id: `error-${Date.now()}`, errorCode: pending ? "needs decision" : "error",
          errorMessage: pending ? "the run stopped before calls that may have run: decide for each under Interrupted run"
            : data.error });
      } else showEvent(data);
    }
  }
  return failure;
}

async function send(text) {
  if (!ui.session) await newSession(text);
  ui.busy = true;
  $("send").disabled = true;
  showEvent({ author: "user", id: `local-${Date.now()}`, content: { role: "user", parts: [{ text }] } });
  try {
    const response = await api("/run_sse", { method: "POST", raw: true, json: {
      appName: ui.app, userId: ui.user, sessionId: ui.session, streaming: $("streaming").checked,
      newMessage: { role: "user", parts: [{ text }] } } });
    await streamRun(response);
  } catch (error) {
    showEvent({ author: "host", id: `error-${Date.now()}`, errorCode: "error", errorMessage: error.message });
  } finally {
    ui.busy = false;
    $("send").disabled = false;
    await Promise.all([loadSessions(), refreshDetails()]);
  }
}

// -- durable runs: the session's last run, when a crash (or a failure) ended it ----------

const resumeState = { pending: null, runId: null, decisions: {} };

async function refreshResume() {
  const box = $("resume");
  if (!ui.session) { box.replaceChildren(element("p", { class: "muted" }, "no interrupted run")); return; }
  let last = null;
  try { last = await api(`${base()}/sessions/${encodeURIComponent(ui.session)}/runs/last`); } catch (_) { /* none */ }
  if (!last || !last.resumable) {
    resumeState.pending = null;
    box.replaceChildren(element("p", { class: "muted" }, "no interrupted run"));
    return;
  }
  if (resumeState.runId !== last.runId) { resumeState.pending = null; resumeState.decisions = {}; }
  resumeState.runId = last.runId;
  const rows = [element("p", { class: "run-status" }, `run ${last.runId} ended ${last.status}`)];
  if (resumeState.pending) {
    rows.push(element("p", {}, "These calls may have run before the crash. Decide for each:"));
    for (const call of resumeState.pending) rows.push(decisionRow(call));
  }
  rows.push(element("button", { type: "button", class: "primary", id: "resume-run", onclick: resume },
    resumeState.pending ? "Resume with these decisions" : "Resume"));
  box.replaceChildren(...rows);
}

function decisionRow(call) {
  const chosen = resumeState.decisions[call.call_id];
  const result = element("input", { placeholder: '{"result": ...}', "aria-label": `result of ${call.call_id}` });
  const choose = (decision) => { resumeState.decisions[call.call_id] = decision; refreshResume(); };
  return element("div", { class: "pending-call", "data-call": call.call_id },
    element("div", { class: "tool" }, `${call.agent} → ${call.name}(${JSON.stringify(call.args)})`),
    element("button", { type: "button", onclick: () => choose({ action: "rerun" }) }, "Run again"), " ",
    result, element("button", { type: "button", onclick: () => {
      try { choose({ action: "result", result: JSON.parse(result.value || "{}") }); }
      catch (_) { result.setCustomValidity("not JSON"); result.reportValidity(); }
    } }, "It ran: this result"), " ",
    element("button", { type: "button", class: "danger", onclick: () => choose({ action: "end" }) }, "End the run"),
    element("span", { class: "muted chosen" }, chosen ? ` chosen: ${chosen.action}` : ""));
}

async function resume() {
  const runId = resumeState.runId;
  const decisions = resumeState.pending ? resumeState.decisions : {};
  $("resume-run").disabled = true;
  try {
    const response = await api(`${base()}/sessions/${encodeURIComponent(ui.session)}/runs/${encodeURIComponent(runId)}/resume`,
      { method: "POST", raw: true, json: { decisions, streaming: $("streaming").checked } });
    const failure = await streamRun(response);
    const details = (failure && failure.error_details) || {};
    resumeState.pending = details.pending_calls || null;
    resumeState.runId = details.run_id || null;  // the run that stopped: the one to resume with the decisions
    resumeState.decisions = {};
  } catch (error) {
    showEvent({ author: "host", id: `error-${Date.now()}`, errorCode: "error", errorMessage: error.message });
  } finally {
    await Promise.all([loadSessions(), refreshDetails()]);
  }
}

// -- sessions, state, artifacts --------------------------------------------------------

async function loadSessions() {
  const list = $("sessions");
  let sessions = [];
  try { sessions = await api(`${base()}/sessions`); } catch (error) { list.replaceChildren(element("li", { class: "muted" }, error.message)); return; }
  sessions.sort((a, b) => b.lastUpdateTime - a.lastUpdateTime);
  list.replaceChildren(...sessions.map((s) => element("li", { class: s.id === ui.session ? "current" : "" },
    element("button", { type: "button", onclick: () => openSession(s.id), title: s.id },
      (s.state.__session_metadata__ && s.state.__session_metadata__.displayName) || s.id),
    element("button", { type: "button", class: "danger", "aria-label": `delete session ${s.id}`,
      onclick: () => deleteSession(s.id) }, "✕"))));
  if (!sessions.length) list.append(element("li", { class: "muted" }, "no sessions yet"));
}

async function newSession(firstText) {
  const name = firstText ? (firstText.length > 47 ? `${firstText.slice(0, 47)}...` : firstText) : "new session";
  const session = await api(`${base()}/sessions`, { method: "POST", json: { state: { __session_metadata__: { displayName: name } } } });
  await openSession(session.id);
}

async function openSession(id) {
  ui.session = id;
  remember();
  live.clear();
  const session = await api(`${base()}/sessions/${encodeURIComponent(id)}`);
  $("chat-title").textContent = conversationTitle(session);
  $("chat-title").title = `session ${id}`;
  $("events").replaceChildren(...session.events.map(renderEvent));
  await Promise.all([loadSessions(), refreshDetails(session)]);
}

async function deleteSession(id) {
  await api(`${base()}/sessions/${encodeURIComponent(id)}`, { method: "DELETE" });
  if (ui.session === id) { ui.session = null; $("events").replaceChildren(); remember(); }
  await loadSessions();
}

function download(name, part) {
  let blob;
  if (part.inlineData) {
    const binary = atob(part.inlineData.data.replace(/-/g, "+").replace(/_/g, "/"));
    blob = new Blob([Uint8Array.from(binary, (c) => c.charCodeAt(0))], { type: part.inlineData.mimeType });
  } else blob = new Blob([part.text || ""], { type: "text/plain" });
  const link = element("a", { href: URL.createObjectURL(blob), download: name });
  link.click();
}

async function refreshDetails(session) {
  await Promise.all([refreshResume(), refreshQuestions()]);
  if (!ui.session) { $("state").textContent = "{}"; $("artifacts").replaceChildren(); await refreshTrace(); return; }
  const current = session || await api(`${base()}/sessions/${encodeURIComponent(ui.session)}`);
  $("state").textContent = JSON.stringify(visibleState(current.state), null, 2);
  if (current.events) $("chat-title").textContent = conversationTitle(current);
  const where = `${base()}/sessions/${encodeURIComponent(ui.session)}/artifacts`;
  const names = await api(where);
  const items = [];
  for (const name of names) {
    const versions = await api(`${where}/${encodeURIComponent(name)}/versions`);
    items.push(element("li", {}, `${name} `, ...versions.map((v) => element("button", { type: "button",
      onclick: async () => download(name, await api(`${where}/${encodeURIComponent(name)}?version=${v}`)) }, `v${v}`))));
  }
  $("artifacts").replaceChildren(...(items.length ? items : [element("li", { class: "muted" }, "none")]));
  await refreshTrace();
}

// -- trace: the spans of the session's last turns, one tree per turn -------------------------

const millis = (span) => `${((span.end_time - span.start_time) / 1e6).toFixed(1)} ms`;

function spanDetails(span) {
  const shown = {};
  for (const [key, value] of Object.entries(span.attributes)) {
    try { shown[key] = typeof value === "string" && /^[[{]/.test(value) ? JSON.parse(value) : value; }
    catch (_) { shown[key] = value; }
  }
  return element("pre", {}, JSON.stringify(shown, null, 2));
}

function spanRow(span, depth) {
  const a = span.attributes;
  const tokens = a["gen_ai.usage.input_tokens"] !== undefined
    ? ` · ${a["gen_ai.usage.input_tokens"]} → ${a["gen_ai.usage.output_tokens"] ?? "?"} tokens` : "";
  const details = element("details", { class: "span", style: `margin-left:${depth}rem`, "data-span": String(span.span_id) },
    element("summary", { class: a["error.type"] ? "bad" : "" }, `${span.name} `,
      element("span", { class: "muted" }, `${millis(span)}${tokens}${a["error.type"] ? ` · ${a["error.type"]}` : ""}`)));
  details.addEventListener("toggle", () => {  // the attributes are drawn when first opened
    if (details.open && details.childElementCount === 1) details.append(spanDetails(span));
  });
  return details;
}

async function refreshTrace() {
  const box = $("trace");
  if (!ui.session) { box.replaceChildren(element("p", { class: "muted" }, "no turn traced yet")); return; }
  let spans = [];
  try { spans = await api(`/dev/apps/${encodeURIComponent(ui.app)}/debug/trace/session/${encodeURIComponent(ui.session)}`); }
  catch (error) { box.replaceChildren(element("p", { class: "muted" }, error.message)); return; }
  const turns = new Map();  // trace id -> its spans, in the order the turns ran
  for (const span of [...spans].sort((x, y) => x.start_time - y.start_time)) {
    if (!turns.has(span.trace_id)) turns.set(span.trace_id, []);
    turns.get(span.trace_id).push(span);
  }
  const blocks = [];
  for (const members of [...turns.values()].reverse()) {  // the last turn first
    const children = new Map();
    for (const span of members) {
      const parent = span.parent_span_id ?? "root";
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(span);
    }
    const rows = [];
    const walk = (parent, depth) => (children.get(parent) || []).forEach((span) => {
      rows.push(spanRow(span, depth));
      walk(span.span_id, depth + 1);
    });
    walk("root", 0);
    const first = members[0];
    blocks.push(element("div", { class: "turn" },
      element("div", { class: "muted" }, `turn ${first.attributes["gcp.vertex.agent.invocation_id"] || ""}`), ...rows));
  }
  box.replaceChildren(...(blocks.length ? blocks : [element("p", { class: "muted" }, "no turn traced yet")]));
}

// -- approvals and the tree (polled) --------------------------------------------------

async function refreshApprovals() {
  if (!ui.app) return;
  let pending = [];
  try { pending = await api(`${base()}/approvals`); } catch (_) { return; }
  const list = $("approvals");
  list.replaceChildren(...pending.map((a) => element("li", { class: "approval", "data-approval": a.id },
    element("div", {}, `${a.agent} wants to call `, element("span", { class: "tool" }, `${a.tool}(${JSON.stringify(a.args)})`)),
    element("div", { class: "muted" }, a.hint || ""),
    element("button", { type: "button", class: "primary", onclick: () => decide(a.id, true) }, "Approve"), " ",
    element("button", { type: "button", class: "danger", onclick: () => decide(a.id, false) }, "Deny"))));
  if (!pending.length) list.append(element("li", { class: "muted" }, "none waiting"));
}

async function decide(id, approve) {
  await api(`${base()}/approvals/${encodeURIComponent(id)}`, { method: "POST", json: { approve } });
  await refreshApprovals();
}

// The held sessions are shown a page at a time (the host may hold thousands), and searched
// by app, user, session or run id: the controls are made once, above the tree.
const treePage = { offset: 0, limit: 50, search: "", total: 0, asked: 0, drawn: 0, out: 0 };

// Walks overlap (a poll each second, one per page turn or search typed, each slow under
// load): true when a walk asked after this one (number asked) is already drawn, so an
// older page never replaces a newer one; else it is the one drawn.
function treeStale(asked) {
  if (asked < treePage.drawn) return true;
  treePage.drawn = asked;
  return false;
}

// The tree's poll: none while a walk is still out (one that waits for a busy partition
// takes up to half a minute), so that waiting walks do not pile up on the host.
function pollTree() {
  if (treePage.out === 0) refreshTree();
}

function treeControls() {
  if ($("tree-search")) return;
  const search = element("input", { id: "tree-search", size: "16", autocomplete: "off",
    placeholder: "app, user, session or run", "aria-label": "search sessions" });
  search.addEventListener("input", () => { treePage.search = search.value.trim(); treePage.offset = 0; refreshTree(); });
  const turn = (step) => {
    treePage.offset = Math.max(0, Math.min(treePage.offset + step * treePage.limit,
      Math.max(0, treePage.total - 1)));
    refreshTree();
  };
  $("tree-note").after(element("div", { id: "tree-page", class: "inline" }, search,
    element("button", { type: "button", id: "tree-prev", "aria-label": "previous sessions", onclick: () => turn(-1) }, "\u2039"),
    element("span", { id: "tree-shown", class: "muted", "aria-live": "polite" }, ""),
    element("button", { type: "button", id: "tree-next", "aria-label": "next sessions", onclick: () => turn(1) }, "\u203a")));
}

async function refreshTree() {
  if (!ui.operator) return;
  treeControls();
  let tree;
  const query = new URLSearchParams({ offset: treePage.offset, limit: treePage.limit, search: treePage.search });
  const asked = ++treePage.asked;
  treePage.out += 1;
  try { tree = await api(`/console/api/tree?${query}`, { patient: true }); } catch (error) {
    $("tree-note").textContent = error.message;
    return;
  } finally { treePage.out -= 1; }
  if (treeStale(asked)) return;
  $("tree-note").textContent = "live; kill an actor and watch it come back";
  banner.restarting = tree.rows.filter((row) => ["restarting", "starting"].includes(row.status))
    .map((row) => row.path);
  showBanner();
  treePage.total = tree.sessions;
  const shown = tree.rows.filter((row) => row.type === "session").length;
  $("tree-shown").textContent = `sessions ${shown ? tree.offset + 1 : 0}-${tree.offset + shown} of ${tree.sessions}` +
    (tree.search ? ` matching "${tree.search}"` : "") + busyNote(tree.rows);
  $("tree-prev").disabled = tree.offset === 0;
  $("tree-next").disabled = tree.offset + shown >= tree.sessions;
  $("tree").tBodies[0].replaceChildren(...tree.rows.map((row) => element("tr", { "data-path": row.path },
    element("td", { style: `padding-left:${0.3 + row.depth}rem`, title: row.path },
      label(row)),
    element("td", { class: `status-${row.status}`, title: row.why || "" }, row.status),
    element("td", { class: "pid" }, row.pid ? String(row.pid) : "-"),
    // Why it was last restarted: the cell's title; a warning sign when it had stopped answering.
    element("td", { class: "restarts", title: row.last_exit ? `last exit: ${row.last_exit}` : "" },
      String(row.restarts) + (row.last_exit && row.last_exit.includes("unresponsive") ? " \u26a0" : "")),
    element("td", {}, row.status === "failed"
      ? element("button", { type: "button", "aria-label": `reset ${row.path}`, onclick: () => reset(row.path) }, "reset")
      : (row.pid || row.type === "session" || row.type === "run")
        ? element("button", { type: "button", class: "danger", "aria-label": `kill ${row.path}`,
          onclick: () => kill(row.path) }, "kill") : ""))));
  // The cluster's other hosts (their actors are killed from their own consoles).
  for (const other of tree.others || []) {
    const title = `host ${other.name}${other.leader ? " (leader)" : ""}${other.unreachable ? `: unreachable (${other.unreachable})` : ""}`;
    $("tree").tBodies[0].append(element("tr", { class: "host", "data-host": other.name },
      element("th", { colspan: "5" }, title)),
      ...other.rows.map((row) => element("tr", { "data-path": `${other.name}/${row.path}` },
        element("td", { style: `padding-left:${0.3 + row.depth}rem`, title: row.path }, label(row)),
        element("td", { class: `status-${row.status}` }, row.status),
        element("td", { class: "pid" }, row.pid ? String(row.pid) : "-"),
        element("td", { class: "restarts" }, String(row.restarts)),
        element("td", {}, ""))));
  }
  $("breakers").replaceChildren(...Object.entries(tree.breakers).map(([model, b]) =>
    element("li", { class: "muted" }, `breaker ${model}: ${b.state || JSON.stringify(b)}`)));
}

// -- background jobs (polled): the newest, a count per queue and state, cancel and retry --

async function refreshJobs() {
  let jobs;
  try { jobs = await api("/jobs?limit=25"); } catch (_) { return; }
  const counts = {};
  for (const job of jobs) {
    counts[job.queue] = counts[job.queue] || {};
    counts[job.queue][job.state] = (counts[job.queue][job.state] || 0) + 1;
  }
  $("jobs-summary").textContent = Object.entries(counts).map(([queue, states]) =>
    `${queue}: ` + Object.entries(states).map(([state, n]) => `${n} ${state}`).join(", ")).join("; ") || "none";
  $("jobs").tBodies[0].replaceChildren(...jobs.map((job) => {
    const what = job.kind === "agent" ? `${job.payload.app_name}: ${job.payload.message}` : job.payload.function;
    const last = job.errors.length ? job.errors[job.errors.length - 1].error : "";
    const action = ["scheduled", "available", "executing", "retryable"].includes(job.state) ? "cancel" : "retry";
    return element("tr", { "data-job": job.id },
      element("td", { title: `${job.id} (${job.queue}, ${job.userId})` }, what),
      element("td", { class: `job-${job.state}`, title: last ? `last error: ${last}` : "" }, job.state),
      element("td", {}, `${job.attempt}/${job.maxAttempts}`),
      element("td", {}, job.state === "completed" ? "" : element("button", {
        type: "button", class: action === "cancel" ? "danger" : "", "aria-label": `${action} ${job.id}`,
        onclick: () => jobAction(job.id, action) }, action)));
  }));
}

async function jobAction(id, action) {
  await api(`/jobs/${encodeURIComponent(id)}/${action}`, { method: "POST" });
  await refreshJobs();
}

// What the count of sessions leaves out: those of the partitions too busy to list them.
function busyNote(rows) {
  const busy = rows.filter((row) => row.status === "busy" && /^sessions\/[^/]+$/.test(row.path)).length;
  return busy ? ` (not counting the sessions of ${busy} busy partition${busy > 1 ? "s" : ""})` : "";
}

// What a row of the tree is called: a process by its id, a session by its user and id,
// a run by the agent that made its last event and how many events it sent.
function label(row) {
  if (row.type === "session") return `${row.user}/${row.session}`;
  if (row.type === "run") return `run ${row.run.slice(4, 12)} (${row.agent || "starting"}, ${row.events} events)`;
  // A partition too busy to list its sessions in time: they are not under it this time, and it says so.
  if (row.status === "busy" && /^sessions\/[^/]+$/.test(row.path)) return `${row.id} (busy: its sessions not listed)`;
  return row.id + (row.sessions !== undefined ? ` (${row.sessions} sessions)` : "");
}

async function kill(path) {
  await api("/console/api/kill", { method: "POST", json: { path } });
  await refreshTree();
}

async function reset(path) {
  await api("/console/api/reset", { method: "POST", json: { path } });
  await refreshTree();
}

// -- start -------------------------------------------------------------------------------

// The page's first questions, asked again every second until the host answers them:
// no answer (its HTTP process restarting) or a 5xx (a part of the tree restarting) is
// waited out, the banner and the header saying so; a refusal (401, 403 ...) is shown.
async function firstAnswer(path) {
  const said = $("whoami").textContent;
  for (;;) {
    try {
      const answer = await api(path);
      $("whoami").textContent = said;
      return answer;
    } catch (error) {
      if (!/^(5\d\d:|the host does not answer)/.test(error.message)) throw error;
      $("whoami").textContent = error.message;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

async function start() {
  $("user").value = ui.user;
  $("token").value = ui.token;
  $("user").addEventListener("change", async () => {
    ui.user = $("user").value.trim() || "user";
    localStorage.setItem("adk-user", ui.user);
    ui.session = null; $("events").replaceChildren();
    await loadSessions();
  });
  $("token").addEventListener("change", () => { localStorage.setItem("adk-token", $("token").value); location.reload(); });
  $("new-session").addEventListener("click", () => newSession());
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("message").value.trim();
    if (!text || ui.busy || !ui.app) return;
    $("message").value = "";
    send(text);
  });
  let me;
  try { me = await firstAnswer("/console/api/whoami"); } catch (error) { $("whoami").textContent = error.message; return; }
  ui.operator = me.operator;
  $("whoami").textContent = me.operator ? "operator" : `signed in as ${me.principal}`;
  if (!me.operator) { ui.user = me.principal; $("user").value = ui.user; $("user").disabled = true; }
  $("tree-section").hidden = !me.operator;
  const apps = await firstAnswer("/list-apps");
  const params = new URLSearchParams(location.search);
  const wanted = params.get("app");
  $("app").replaceChildren(...apps.map((a) => element("option", { value: a }, a)));
  ui.app = apps.includes(wanted) ? wanted : apps[0];
  $("app").value = ui.app;
  $("send").disabled = !ui.app;  // disabled in the page until the app is known (a send before: app null)
  $("app").addEventListener("change", async () => {
    ui.app = $("app").value; ui.session = null; $("events").replaceChildren();
    remember();
    await Promise.all([loadSessions(), refreshDetails(), refreshApprovals()]);
  });
  remember();
  // The polls start now, not once the first answers are in: the first walk of the tree is
  // patient (no SLOW_MS timer; it may wait half a minute for a busy partition), and a page
  // whose polls waited for it asked nothing else meanwhile, so it never showed the banner
  // when the HTTP process stopped answering in that time (issue 54).
  setInterval(refreshApprovals, 1000);
  setInterval(pollTree, 1000);
  setInterval(refreshJobs, 1000);
  setInterval(() => refreshAppErrors().catch(() => {}), 2000);
  refreshTree();
  refreshAppErrors().catch(() => {});
  await Promise.all([loadSessions(), refreshApprovals(), refreshJobs()]);
  if (params.get("session")) await openSession(params.get("session")).catch(() => { ui.session = null; remember(); });
}

start();
