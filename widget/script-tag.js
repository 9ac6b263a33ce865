// The file the script tag loads (README, Putting the widget on a site): it queues the page's calls,
// and the tag's own data-* attributes as a first `init`, then imports the widget's module from
// where it came from. The build writes in the module's file name.
(function () {
  var tag = document.currentScript;
  var api = (window.Concierge = window.Concierge || { q: [] });
  if (api.q) {
    ['init', 'open', 'close', 'destroy', 'on', 'registerAction', 'trigger', 'setContext', 'greet'].forEach(function (name) {
      api[name] = api[name] || function () { api.q.push([name, [].slice.call(arguments)]); };
    });
    var data = tag && tag.dataset;
    if (data && data.deploymentId) api.q.unshift(['init', [{ deploymentId: data.deploymentId, tokenUrl: data.tokenUrl, baseUrl: data.baseUrl }]]);
  }
  import(new URL(WIDGET_MODULE, tag ? tag.src : location.href).href);
})();
