// The hotel's page gives the concierge one thing it can do here: show the rooms. A file of its
// own, after /queue.js: the page's CSP allows no inline script, and the widget may load later.
(function () {
  Concierge.registerAction('show_rooms', function () {
    var rooms = document.getElementById('rooms');
    rooms.scrollIntoView({ behavior: 'smooth', block: 'start' });
    rooms.classList.add('shown');
    rooms.dataset.shownTimes = String(Number(rooms.dataset.shownTimes || 0) + 1);
  });
})();
