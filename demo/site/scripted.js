// Runs in <head>, before the bundle (an async tag after this one) can: every call is queued, then
// replayed in order once it loads.
(function () {
  var d = document.currentScript.dataset;
  window.seen = [];
  Concierge.init({ deploymentId: d.deploymentId, baseUrl: d.serviceUrl, tokenUrl: '/token' });
  Concierge.on('ready', function () {
    window.seen.push('ready');
  });
  Concierge.on('reply', function (e) {
    window.seen.push('reply:' + e.text.slice(0, 9));
  });
  Concierge.open();
})();
