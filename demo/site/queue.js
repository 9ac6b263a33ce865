// The loader queue from the README: calls made before the bundle loads wait here.
window.Concierge = window.Concierge || { q: [] };
['init', 'open', 'close', 'destroy', 'on', 'registerAction', 'trigger', 'setContext', 'greet'].forEach(function (m) {
  Concierge[m] =
    Concierge[m] ||
    function () {
      Concierge.q.push([m, [].slice.call(arguments)]);
    };
});
