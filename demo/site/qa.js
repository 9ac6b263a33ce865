// The QA panel: what crossed the wire between the hotel's server and Concierge, live, and the
// switch for how the hotel's server answers. A file of its own: the page's CSP allows no inline script.
(function () {
  var list = document.getElementById('qa-wire');
  var form = document.getElementById('qa-behaviour');
  var select = document.getElementById('qa-mode');
  var delay = document.getElementById('qa-delay');
  var applied = document.getElementById('qa-applied');
  // What each way of answering does, as QA reads it in the menu.
  var MODE_WORDS = {
    deferred: 'Deferred: acknowledges, replies after the delay',
    stream: 'Streamed: the reply in parts, 150 ms apart',
    sync: "At once: the reply in the hook's own answer",
    hook_500: 'Fails: answers 500 (retried, then failed)',
    hook_400: 'Refuses: answers 400 (failed at once)',
    duplicate: 'Twice: posts the same reply again',
    bad_signature: 'Bad signature: its reply is refused',
    no_reply: 'Silent: never replies (the turn times out)',
  };

  fetch('/qa/behaviour')
    .then(function (r) {
      return r.json();
    })
    .then(function (b) {
      b.modes.forEach(function (mode) {
        var option = document.createElement('option');
        option.value = mode;
        option.textContent = MODE_WORDS[mode] || mode;
        select.appendChild(option);
      });
      select.value = b.mode;
      delay.value = String(b.delayMs);
    });

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    fetch('/qa/behaviour', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: select.value, delayMs: Number(delay.value) }),
    })
      .then(function (r) {
        return r.json();
      })
      .then(function (b) {
        applied.textContent = b.error
          ? b.error
          : 'Now: ' + (MODE_WORDS[b.mode] || b.mode).split(':')[0] + ', ' + b.delayMs + ' ms';
      });
  });

  // Who answers the demo agent: the hotel's server, its pages (README, Answers from your documents), or a
  // model on one of the customer's endpoints (README, An agent without a server).
  var responderForm = document.getElementById('qa-responder');
  var answerer = document.getElementById('qa-answerer');
  var model = document.getElementById('qa-model');
  var responderApplied = document.getElementById('qa-responder-applied');
  function showResponder(r) {
    if (r.error) return (responderApplied.textContent = r.error);
    while (answerer.options.length > 2) answerer.remove(2);
    r.endpoints.forEach(function (e) {
      var option = document.createElement('option');
      option.value = e.id;
      option.textContent = 'A model on ' + e.name + ' (' + e.base_url + ')';
      answerer.appendChild(option);
    });
    document.getElementById('qa-no-model').hidden = r.endpoints.length > 0;
    answerer.value = r.responder === 'model' ? r.endpointId : r.responder;
    if (r.model) model.value = r.model;
    responderApplied.textContent =
      'Now: ' +
      (r.responder === 'model'
        ? 'the model ' + r.model
        : r.responder === 'knowledge'
          ? "the hotel's pages"
          : "the hotel's server");
  }
  fetch('/qa/responder')
    .then(function (r) {
      return r.json();
    })
    .then(showResponder);
  responderForm.addEventListener('submit', function (event) {
    event.preventDefault();
    var plain = answerer.value === 'hook' || answerer.value === 'knowledge';
    fetch('/qa/responder', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        plain ? { responder: answerer.value } : { responder: 'model', endpointId: answerer.value, model: model.value },
      ),
    })
      .then(function (r) {
        return r.json();
      })
      .then(showResponder);
  });

  // What happens in the page: its client action running, and the widget's errors (action_failed among them).
  Concierge.registerAction('show_rooms', function (args, context) {
    show({
      at: new Date().toISOString(),
      kind: 'page',
      summary: 'client action show_rooms ran',
      detail: { args: args, turn_id: context.turnId },
    });
  });
  Concierge.on('error', function (e) {
    show({ at: new Date().toISOString(), kind: 'page', summary: 'widget error ' + e.code, detail: e });
  });

  // The agent's voice: each sentence as it begins (the service's audio or the browser's voice), and how far it was heard.
  Concierge.on('speech', function (e) {
    show({
      at: new Date().toISOString(),
      kind: 'voice',
      summary: 'says sentence ' + e.sentence + ' in the ' + e.voice + "'s voice: " + e.text,
      detail: e,
    });
  });
  Concierge.on('playback', function (e) {
    show({
      at: new Date().toISOString(),
      kind: 'voice',
      summary: 'sentence ' + e.sentence + ' ' + e.state + ' at ' + e.offsetMs + ' ms',
      detail: e,
    });
  });

  // The hands-free mic (README, Hands-free voice): speech heard, the words so far, the agent's voice stopped or back, the mic closed.
  Concierge.on('listening', function (e) {
    var frame = e.frame;
    var said = frame.text !== undefined ? ': ' + frame.text : frame.reason ? ' (' + frame.reason + ')' : '';
    show({ at: new Date().toISOString(), kind: 'voice', summary: 'open mic: ' + frame.type + said, detail: frame });
  });

  var events = new EventSource('/qa/events');
  events.onmessage = function (message) {
    var entry = JSON.parse(message.data);
    show(entry);
    var body = entry.detail && entry.detail.body;
    if (entry.kind === 'transcript' && body && body.type === 'conversation.analyzed') showAnalysis(body);
  };

  var ended = document.getElementById('qa-ended');
  document.getElementById('qa-end').addEventListener('click', function () {
    ended.textContent = 'Ending…';
    fetch('/qa/end', { method: 'POST' })
      .then(function (r) {
        return r.json();
      })
      .then(function (body) {
        ended.textContent = body.error ? body.error : 'Ended: the analysis follows';
      });
  });

  // A conversation.analyzed event (README, Tests and analysis): its summary, criteria and fields, in words.
  function showAnalysis(event) {
    var box = document.getElementById('qa-analysis');
    var analysis = event.data;
    box.textContent = '';
    var summary = document.createElement('p');
    summary.textContent = analysis.summary || '(no summary asked for)';
    box.appendChild(summary);
    var facts = document.createElement('dl');
    Object.keys(analysis.criteria).forEach(function (id) {
      add(facts, id, analysis.criteria[id].result + ': ' + analysis.criteria[id].reason);
    });
    Object.keys(analysis.fields).forEach(function (name) {
      var value = analysis.fields[name];
      add(facts, name, value === null ? 'not said' : String(value));
    });
    box.appendChild(facts);
    var when = document.createElement('p');
    when.className = 'qa-hint';
    when.textContent = 'Conversation ' + event.conversation_id.slice(0, 8) + ', analysed ' + analysis.at.slice(11, 19);
    box.appendChild(when);
  }

  function add(list, term, description) {
    var dt = document.createElement('dt');
    dt.textContent = term;
    var dd = document.createElement('dd');
    dd.textContent = description;
    list.appendChild(dt);
    list.appendChild(dd);
  }

  function show(entry) {
    var item = document.createElement('li');
    item.setAttribute('data-kind', entry.kind);
    var kind = document.createElement('span');
    kind.className = 'kind';
    kind.textContent = entry.kind;
    var summary = document.createElement('span');
    summary.textContent = entry.at.slice(11, 23) + ' ' + entry.summary;
    var detail = document.createElement('details');
    var label = document.createElement('summary');
    label.textContent = 'details';
    var pre = document.createElement('pre');
    pre.textContent = JSON.stringify(entry.detail, null, 2);
    detail.appendChild(label);
    detail.appendChild(pre);
    item.appendChild(kind);
    item.appendChild(summary);
    item.appendChild(detail);
    list.insertBefore(item, list.firstChild);
  }
})();
