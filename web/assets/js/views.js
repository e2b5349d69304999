// Registries of views that modes and groups add to the page without
// touching turn.js: a data part's view by part name (data-<name>), and a
// view of a tool's result by tool name. Each view module under views/
// registers its own and views/all.js imports them once.
//
// Views receive data from the network: they must check every field and
// return null rather than throw when one is missing or odd.

const parts = new Map();
const tools = new Map();
const answers = new Map();

// registerPartView makes view(data, id) the element shown for data parts
// named name (without the "data-" prefix). block, when given, groups parts
// of that name into one container of that class.
export function registerPartView(name, view, { block = '' } = {}) {
  parts.set(name, { view, block });
}

// registerToolView makes view(tool) the element shown under a finished
// call of the tool named name; tool is {name, title, input, output, error}.
export function registerToolView(name, view) {
  tools.set(name, view);
}

// registerAnswerView makes view(tool) an element shown under the answer
// for each finished call of the tool named name (a web search's images).
export function registerAnswerView(name, view) {
  answers.set(name, view);
}

export function answerView(name) {
  return answers.get(name) || null;
}

export function partView(name) {
  return parts.get(name) || null;
}

export function toolView(name) {
  return tools.get(name) || null;
}
