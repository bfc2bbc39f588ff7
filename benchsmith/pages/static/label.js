// The labelling page: one (question, passage) pair at a time, graded with the keyboard alone.
"use strict";

let whole = false;
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
  whole = false;
  await loadItem(target, "Nothing to label.", showItem);
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

function keyAction(key) {
  if (!item) return null;
  if (["0", "1", "2", "3"].includes(key)) return () => judge(Number(key));
  if (key === "s") return () => judge(null);
  if (key === "j" || key === "ArrowRight") return () => load(index + 1);
  if (key === "k" || key === "ArrowLeft") return () => load(index - 1);
  if (key === "o") return () => { whole = !whole; showItem(); };
  if (key === "n") return () => document.getElementById("note").focus();
  return null;
}

async function start() {
  document.addEventListener("keydown", (event) => onPageKey(event, keyAction));
  for (const button of document.querySelectorAll("#grades button")) {
    button.addEventListener("click", () => judge(Number(button.dataset.grade)));
  }
  state = await api("state");
  showProgress();
  await load(state.next);
}

start().catch((error) => setText("message", "Cannot load: " + error.message));
