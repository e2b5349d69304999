// Math in answers: markdown.js leaves each formula ($…$, \(…\), $$…$$,
// \[…\]) as a .math element holding its TeX as text; renderMath draws them
// with the vendored KaTeX, loaded on the first answer that has math. A
// formula KaTeX cannot parse stays as its TeX.

let katex = null; // the module's promise, once asked for

function load() {
  if (!katex) {
    const link = document.createElement('link');
    link.setAttribute('rel', 'stylesheet');
    link.setAttribute('href', '/assets/vendor/katex/katex.min.css');
    document.head.append(link);
    katex = import('../vendor/katex/katex.mjs').then((m) => m.default);
  }
  return katex;
}

// renderMath draws the formulas under root that are not drawn yet.
export async function renderMath(root) {
  const todo = [...root.querySelectorAll('.math:not(.math-done)')];
  if (!todo.length) return;
  let k;
  try {
    k = await load();
  } catch {
    return; // the TeX stays readable as text
  }
  for (const el of todo) {
    if (!el.isConnected || el.classList.contains('math-done')) continue;
    const tex = el.dataset.tex || el.textContent;
    try {
      k.render(tex, el, { displayMode: el.classList.contains('math-display'), throwOnError: false, trust: false, maxExpand: 200, maxSize: 20, output: 'htmlAndMathml' });
      el.classList.add('math-done');
    } catch {
      // left as TeX
    }
  }
}
