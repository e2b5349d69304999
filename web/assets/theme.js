// Applies the saved colour theme before the page paints, so that a person
// who chose dark does not see a flash of light. Classic script on purpose:
// modules run after parsing, too late for that.
(function () {
  try {
    var t = localStorage.getItem('sova.theme');
    if (t === 'light' || t === 'dark') document.documentElement.dataset.theme = t;
  } catch (e) { /* storage disabled: follow the system */ }
})();
