// What both pages share: the API (with the access token when the server asks for one) and text
// rendering. Document text and model output only ever reach the page through textContent and
// text nodes, never as HTML.
"use strict";

const accessToken = new URLSearchParams(window.location.search).get("token");

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
