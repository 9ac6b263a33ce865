// The booking form tells the concierge what happens on it (README, Greeting visitors first): the
// context of the visit, and each refusal as a page event, which the deployment's rule
// `booking-help` answers with a teaser and the hotel's server with what went wrong.
(function () {
  var form = document.getElementById('booking');
  var status = document.getElementById('booking-status');
  Concierge.setContext({ page: 'table booking' });
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var guests = Number(form.guests.value);
    var booking = { date: form.date.value, time: form.time.value, guests: guests };
    if (!booking.date || !(guests >= 1)) {
      status.textContent = 'Choose an evening and how many you are.';
      return;
    }
    if (guests > 8) {
      status.textContent = 'Online bookings take up to 8 guests.';
      Concierge.trigger('booking_form_error', { reason: 'more than 8 guests', guests: guests });
      return;
    }
    status.textContent = 'Requested: the restaurant confirms by email.';
    Concierge.trigger('booking_requested', booking);
  });
})();
