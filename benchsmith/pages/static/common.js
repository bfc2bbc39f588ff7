// What both pages share: the API (with the access token when the server asks for one) and text
// rendering. Document text and model output only ever reach the page through textContent and
// text nodes, never as HTML.
"use strict";

const accessToken = new URLSearchParams(window.location.search).get("token");

// Both pages show one item of a queue at a time: the server's state, the item, its place, when shown.
let state = null;
let item = null;
let index = 0;
let shownAt = performance.now();

async function api(route, body) {
  const headers = { "Content-Type": "application/json" };
  if (accessToken) headers["X-Access-Token"] = accessToken;
  const response = await fetch("/api/" + route, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || response.statusText);
  return answer;
}

function setText(id, text) {
  document.getElementById(id).textContent = text == null ? "" : String(text);
}

// Fill `element` with text[start:end], the ranges of `marks` (absolute offsets) as <mark> elements.
function renderMarked(element, text, start, end, marks) {
  element.replaceChildren();
  let at = start;
  for (const [markStart, markEnd] of marks) {
    if (markEnd <= at || markStart >= end) continue;
    const from = Math.max(markStart, at);
    if (from > at) element.appendChild(document.createTextNode(text.slice(at, from)));
    const mark = document.createElement("mark");
    mark.textContent = text.slice(from, Math.min(markEnd, end));
    element.appendChild(mark);
    at = Math.min(markEnd, end);
  }
  if (at < end) element.appendChild(document.createTextNode(text.slice(at, end)));
}

function secondsText(seconds) {
  return seconds == null ? "–" : seconds.toFixed(1) + " s";
}

// Keys act one after another (a grade or verdict is saved before "back" moves); a failure is shown.
let pending = Promise.resolve();

function queue(action) {
  pending = pending.then(action).catch((error) => setText("message", "Not saved: " + error.message));
}

// A key on either page: typed into the note it stays there (Enter or Esc return to the keys); with
// Ctrl, Cmd or Alt it is the browser's; else `actionFor(key)` names what it does, if anything, queued.
function onPageKey(event, actionFor) {
  const note = document.getElementById("note");
  if (document.activeElement === note) {
    if (event.key === "Enter" || event.key === "Escape") {
      note.blur();
      event.preventDefault();
    }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const action = actionFor(event.key);
  if (action) {
    event.preventDefault();
    queue(action);
  }
}

// Show the item at `target` (kept within the queue) with the page's `show`; `nothing` when it is empty.
async function loadItem(target, nothing, show) {
  if (state.total === 0) return setText("message", nothing);
  index = Math.max(0, Math.min(target, state.total - 1));
  item = await api("item?index=" + index);
  shownAt = performance.now();
  show();
  document.body.dataset.ready = "yes";
}
