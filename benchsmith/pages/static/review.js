// The review page: one synthesized turn at a time, accepted, rejected with a rubric class, or edited.
"use strict";

let choosingClass = false;

function showProgress() {
  const c = state.counts;
  setText(
    "progress",
    `${state.reviewer}: ${state.done} done, ${state.left} left of ${state.total} · ` +
      `${c.accept} accepted, ${c.reject} rejected, ${c.edit} edited · ${secondsText(state.mean_seconds)} per turn`
  );
}

function paragraph(text, className) {
  const p = document.createElement("p");
  p.textContent = text;
  if (className) p.className = className;
  return p;
}

function showItem() {
  setText("turn-id", item.turn_id);
  setText("turn-type", item.turn_type);
  setText("switch", item.switch);
  setText("position", `${item.index + 1} of ${item.total}`);
  const history = document.getElementById("history");
  history.replaceChildren();
  for (const [question, reply] of item.previous) {
    history.appendChild(paragraph("User: " + question));
    history.appendChild(paragraph("Agent: " + reply));
  }
  setText("question", item.question);
  const edited = item.edited_question != null;
  document.getElementById("edited").hidden = !edited;
  document.getElementById("edited-caption").hidden = !edited;
  setText("edited", item.edited_question);
  setText("reply", item.reply);
  const passages = document.getElementById("passages");
  passages.replaceChildren();
  for (const passage of item.passages) {
    passages.appendChild(paragraph(`${passage.role} passage · ${passage.id}`, "caption"));
    passages.appendChild(paragraph(passage.text, "passage"));
  }
  const flags = Object.entries(item.gate_flags).map(([name, why]) => `${name}: ${why}`);
  const refused = Object.entries(item.gate_rejections).map(([name, count]) => `${name} ×${count}`);
  setText(
    "flags",
    (flags.length ? "Quality gate flags: " + flags.join("; ") : "No quality gate flag") +
      (refused.length ? ` · questions the gate refused before this one: ${refused.join(", ")}` : "")
  );
  const verdict = item.verdict == null ? "no verdict yet"
    : item.verdict === "reject" ? `rejected: ${item.rubric_class}` : item.verdict === "edit" ? "edited" : "accepted";
  setText("current-verdict", verdict);
  for (const button of document.querySelectorAll("#verdicts button")) {
    button.classList.toggle("chosen", item.verdict === button.dataset.verdict);
  }
  document.getElementById("note").value = item.note || "";
  showRubric(false);
  document.body.dataset.index = String(item.index);
  document.body.dataset.turnId = item.turn_id;
}

function showRubric(visible) {
  choosingClass = visible;
  document.getElementById("rubric").hidden = !visible;
}

async function load(target) {
  await loadItem(target, "The benchmark has no turns.", showItem);
}

async function decide(verdict, extra) {
  document.body.dataset.ready = "no";
  const body = {
    index,
    verdict,
    note: document.getElementById("note").value,
    seconds: (performance.now() - shownAt) / 1000,
    ...extra,
  };
  state = await api("verdict", body);
  showProgress();
  await load(index < state.total - 1 ? index + 1 : index);
}

function startEdit() {
  const edit = document.getElementById("edit");
  edit.hidden = false;
  document.getElementById("edit-label").hidden = false;
  edit.value = item.edited_question || item.question;
  edit.focus();
}

function endEdit(save) {
  const edit = document.getElementById("edit");
  const text = edit.value.trim();
  edit.hidden = true;
  document.getElementById("edit-label").hidden = true;
  edit.blur();
  if (save && text) queue(() => decide("edit", { edited_question: text }));
}

function onKey(event) {
  const edit = document.getElementById("edit");
  if (document.activeElement === edit) {
    if (event.key === "Enter" || event.key === "Escape") {
      event.preventDefault();
      endEdit(event.key === "Enter");
    }
    return;
  }
  onPageKey(event, keyAction);
}

function keyAction(key) {
  if (!item) return null;
  if (choosingClass && /^[1-9]$/.test(key) && Number(key) <= state.rubric_classes.length) {
    const rubricClass = state.rubric_classes[Number(key) - 1];
    return () => decide("reject", { rubric_class: rubricClass });
  }
  if (key === "Escape") return () => showRubric(false);
  if (key === "a") return () => decide("accept", {});
  if (key === "r") return () => showRubric(true);
  if (key === "e") return () => startEdit();
  if (key === "n") return () => document.getElementById("note").focus();
  if (key === "j" || key === "ArrowRight") return () => load(index + 1);
  if (key === "k" || key === "ArrowLeft") return () => load(index - 1);
  return null;
}

async function start() {
  document.addEventListener("keydown", onKey);
  state = await api("state");
  const rubric = document.getElementById("rubric");
  state.rubric_classes.forEach((name) => {
    const entry = document.createElement("li");
    entry.textContent = name;
    rubric.appendChild(entry);
  });
  showProgress();
  // /?turn=c0003_t2 opens that turn (a report's link to a turn it lists); else the first without a verdict.
  const wanted = new URLSearchParams(window.location.search).get("turn");
  const found = wanted ? await api("find?turn=" + encodeURIComponent(wanted)) : null;
  await load(found ? found.index : state.next);
}

start().catch((error) => setText("message", "Cannot load: " + error.message));
