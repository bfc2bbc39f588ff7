// The labelling page: one (question, passage) pair at a time, graded with the keyboard alone.
"use strict";

let state = null;
let item = null;
let index = 0;
let whole = false;
let shownAt = performance.now();
let pending = Promise.resolve(); // keys act one after another: a grade is saved before "back" moves
const GRADE_NAMES = ["not relevant", "marginally relevant", "fairly relevant", "highly relevant"];

function showProgress() {
  const role = state.role === "second" ? " (second assessor's sample)" : "";
  setText(
    "progress",
    `${state.assessor}${role}: ${state.done} done, ${state.left} left of ${state.total} · ` +
      `${secondsText(state.mean_seconds)} per judgment`
  );
}

function showItem() {
  setText("question-id", item.question_id);
  setText("question", item.question);
  setText("doc-id", item.doc_id);
  setText("position", `${item.index + 1} of ${item.total} (${item.in_pool[0]} of ${item.in_pool[1]} for this question)`);
  setText("title", item.title);
  const [start, end] = whole ? [0, item.text.length] : item.excerpt;
  const cut = end - start < item.text.length;
  setText("scope", cut ? "· excerpt (o: whole chunk)" : whole ? "· whole chunk" : "");
  const passage = document.getElementById("passage");
  renderMarked(passage, item.text, start, end, item.marks);
  if (start > 0) passage.prepend(document.createTextNode("… "));
  if (end < item.text.length) passage.appendChild(document.createTextNode(" …"));
  document.getElementById("note").value = item.note || "";
  setText(
    "current-grade",
    item.judged ? (item.grade == null ? "skipped" : `graded ${item.grade}: ${GRADE_NAMES[item.grade]}`) : "not judged yet"
  );
  for (const button of document.querySelectorAll("#grades button")) {
    button.classList.toggle("chosen", item.judged && String(item.grade) === button.dataset.grade);
  }
  document.body.dataset.index = String(item.index);
  document.body.dataset.docId = item.doc_id;
}

async function load(target) {
  if (state.total === 0) {
    setText("message", "Nothing to label.");
    return;
  }
  index = Math.max(0, Math.min(target, state.total - 1));
  item = await api("item?index=" + index);
  whole = false;
  shownAt = performance.now();
  showItem();
  document.body.dataset.ready = "yes";
}

async function judge(grade) {
  document.body.dataset.ready = "no";
  const seconds = (performance.now() - shownAt) / 1000;
  const note = document.getElementById("note").value;
  state = await api("judge", { index, grade, note, seconds });
  showProgress();
  if (state.left === 0 && index === state.total - 1) {
    setText("message", "Every pair is judged: stop the server (Ctrl-C) to write the export.");
  }
  if (index < state.total - 1) {
    await load(index + 1);
  } else {
    item = await api("item?index=" + index);
    showItem();
    document.body.dataset.ready = "yes";
  }
}

function onKey(event) {
  const note = document.getElementById("note");
  if (document.activeElement === note) {
    if (event.key === "Enter" || event.key === "Escape") {
      note.blur();
      event.preventDefault();
    }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey || !item) return;
  const key = event.key;
  let action = null;
  if (["0", "1", "2", "3"].includes(key)) action = () => judge(Number(key));
  else if (key === "s") action = () => judge(null);
  else if (key === "j" || key === "ArrowRight") action = () => load(index + 1);
  else if (key === "k" || key === "ArrowLeft") action = () => load(index - 1);
  else if (key === "o") action = () => { whole = !whole; showItem(); };
  else if (key === "n") action = () => note.focus();
  if (action) {
    event.preventDefault();
    pending = pending.then(action).catch((error) => setText("message", "Not saved: " + error.message));
  }
}

async function start() {
  document.addEventListener("keydown", onKey);
  for (const button of document.querySelectorAll("#grades button")) {
    button.addEventListener("click", () => judge(Number(button.dataset.grade)));
  }
  state = await api("state");
  showProgress();
  await load(state.next);
}

start().catch((error) => setText("message", "Cannot load: " + error.message));
