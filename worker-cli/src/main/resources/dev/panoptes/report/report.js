// Builds the samples table from the embedded JSON, filters it (text, wrong only, model, group)
// and sorts it by a clicked header; a sample with a transcript (a sandboxed sample's model turns,
// tool calls and outputs) expands to it below its row. Sample text is untrusted: it only ever
// goes into textContent or a title, never into innerHTML.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('panoptes-data').textContent);
  var longColumns = data.sampleLongColumns;
  var numericColumns = data.sampleNumericColumns || [];
  var columns = data.sampleColumns;
  var RUN = columns.indexOf('run');
  var MODEL = columns.indexOf('model');
  var SCORE = columns.indexOf('score');
  var body = document.getElementById('sample-rows');
  var box = document.getElementById('sample-search');
  var wrong = document.getElementById('sample-wrong');
  var model = document.getElementById('sample-model');
  var group = document.getElementById('sample-group');
  var count = document.getElementById('sample-count');
  var transcripts = data.sampleTranscripts || [];
  var VIGNETTE = columns.indexOf('vignette');
  var rows = [];

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) {
      e.className = className;
    }
    if (text !== undefined && text !== null) {
      e.textContent = String(text);
    }
    return e;
  }

  function plural(n, one) {
    return n + ' ' + one + (n === 1 ? '' : 's');
  }

  // A tool call's arguments as the model sent them: each field of a JSON object on its own
  // (a command or code shown as text, not as an escaped JSON string), anything else as sent.
  function argumentsText(text) {
    var parsed;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      return text;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return text;
    }
    return Object.keys(parsed).map(function (key) {
      var value = parsed[key];
      return key + ': ' + (typeof value === 'string' ? value : JSON.stringify(value));
    }).join('\n');
  }

  // Exit status, duration and the marks of a command's result, as one line.
  function resultMeta(e) {
    var parts = [];
    if (e.exitStatus !== undefined && e.exitStatus !== null) {
      parts.push('exit ' + e.exitStatus);
    }
    if (e.durationMs !== undefined && e.durationMs !== null) {
      parts.push(e.durationMs + ' ms');
    }
    if (e.truncated) {
      parts.push('output truncated');
    }
    if (e.timedOut) {
      parts.push('timed out');
    }
    return parts;
  }

  function meta(li, parts) {
    if (parts.length > 0) {
      li.appendChild(el('span', 'event-meta', ' (' + parts.join(', ') + ')'));
    }
  }

  function output(li, className, text) {
    var pre = el('pre', className, text === '' ? '(no output)' : text);
    if (text === '') {
      pre.classList.add('empty');
    }
    li.appendChild(pre);
  }

  function renderEvent(e) {
    var li = el('li', 'event');
    li.setAttribute('data-type', e.type);
    if (e.type === 'model') {
      li.appendChild(el('span', 'event-title', 'Model turn ' + e.turn));
      var parts = [];
      if (e.promptTokens !== undefined) {
        parts.push(e.promptTokens + ' prompt + ' + e.completionTokens + ' completion tokens');
      }
      if (e.durationMs !== undefined) {
        parts.push(e.durationMs + ' ms');
      }
      if (e.finishReason) {
        parts.push('finish: ' + e.finishReason);
      }
      meta(li, parts);
      if (e.text) {
        li.appendChild(el('pre', 'model-text', e.text));
      }
      (e.toolCalls || []).forEach(function (call) {
        var div = el('div', 'model-call', 'calls ');
        div.appendChild(el('code', 'tool-name', call.name));
        div.appendChild(document.createTextNode(' (' + call.id + ')'));
        li.appendChild(div);
      });
    } else if (e.type === 'tool') {
      li.appendChild(el('span', 'event-title', 'Tool '));
      li.appendChild(el('code', 'tool-name', e.name));
      li.appendChild(document.createTextNode(' (' + e.id + ')'));
      meta(li, resultMeta(e));
      li.appendChild(el('pre', 'tool-arguments', argumentsText(e.arguments || '')));
      if (e.error) {
        li.appendChild(el('div', 'tool-error', 'error: ' + e.error));
      }
      if (e.sandboxFailure) {
        li.appendChild(el('div', 'tool-error', 'sandbox: ' + e.sandboxFailure));
      }
      output(li, 'tool-output', e.output === undefined || e.output === null ? '' : e.output);
    } else {
      // setup, and any kind of event a newer worker writes: its command and result.
      li.appendChild(el('span', 'event-title', (e.type === 'setup' ? 'Setup ' : e.type + ' ')));
      if (e.command) {
        li.appendChild(el('code', 'event-command', e.command));
      }
      meta(li, resultMeta(e));
      if (e.sandboxFailure) {
        li.appendChild(el('div', 'tool-error', 'sandbox: ' + e.sandboxFailure));
      }
      if (e.output !== undefined) {
        output(li, 'event-output', e.output);
      }
    }
    return li;
  }

  function renderTranscript(t) {
    var box = el('div', 'transcript');
    var summary = [];
    if (typeof t.turns === 'number') {
      summary.push(plural(t.turns, 'model turn'));
    }
    if (typeof t.tokens === 'number') {
      summary.push(plural(t.tokens, 'token'));
    }
    summary.push(t.limit ? 'stopped by its ' + t.limit + ' limit' : 'no limit met');
    box.appendChild(el('p', 'transcript-summary', summary.join(', ') + '.'));
    var list = el('ol', 'transcript-events');
    (t.events || []).forEach(function (e) {
      list.appendChild(renderEvent(e));
    });
    if (t.check) {
      var li = el('li', 'event');
      li.setAttribute('data-type', 'check');
      li.appendChild(el('span', 'event-title', 'Check '));
      li.appendChild(el('code', 'event-command', t.check.command));
      meta(li, [t.check.passed ? 'passed' : 'failed'].concat(resultMeta(t.check)));
      output(li, 'event-output', t.check.output || '');
      list.appendChild(li);
    }
    box.appendChild(list);
    return box;
  }

  // Opens or closes a sample's transcript, in a row of its own under the sample's.
  function toggleTranscript(r, button) {
    if (!r.detail) {
      r.detail = el('tr', 'transcript-row');
      var td = el('td');
      td.colSpan = columns.length;
      td.appendChild(renderTranscript(r.transcript));
      r.detail.appendChild(td);
      r.tr.parentNode.insertBefore(r.detail, r.tr.nextSibling);
    }
    r.open = !r.open;
    r.detail.hidden = !r.open || r.tr.hidden;
    button.setAttribute('aria-expanded', r.open ? 'true' : 'false');
    button.textContent = r.open ? 'hide transcript' : 'transcript';
  }

  var fragment = document.createDocumentFragment();
  data.samples.forEach(function (sample, index) {
    var tr = document.createElement('tr');
    tr.className = 'sample';
    sample.forEach(function (value, column) {
      var td = document.createElement('td');
      if (longColumns.indexOf(column) >= 0) {
        var div = document.createElement('div');
        div.textContent = value;
        td.className = 'long';
        td.appendChild(div);
      } else if (column === RUN) {
        // A 16-character id wrapped three characters a line; the short form with the whole on hover.
        td.textContent = value.length > 8 ? value.slice(0, 8) : value;
        td.title = value;
        td.className = 'run-id';
      } else {
        td.textContent = value;
      }
      tr.appendChild(td);
    });
    var score = sample[SCORE] === '' ? NaN : parseFloat(sample[SCORE]);
    var row = {
      tr: tr,
      cells: sample,
      index: index,
      haystack: sample.join('\u0000').toLowerCase(),
      wrong: !isNaN(score) && score < 1,
      group: data.sampleGroups ? data.sampleGroups[index] : '',
      transcript: transcripts[index] || null,
      detail: null,
      open: false
    };
    if (row.transcript && VIGNETTE >= 0) {
      var button = el('button', 'transcript-toggle', 'transcript');
      button.type = 'button';
      button.setAttribute('aria-expanded', 'false');
      button.title = 'Show the model turns, tool calls and outputs of this sample';
      button.addEventListener('click', function () {
        toggleTranscript(row, button);
      });
      tr.cells[VIGNETTE].appendChild(button);
      tr.classList.add('has-transcript');
    }
    rows.push(row);
    fragment.appendChild(tr);
  });
  body.appendChild(fragment);

  // Rows that do not match get the hidden attribute (display: none).
  function apply() {
    var needle = box.value.toLowerCase();
    var onlyWrong = wrong.checked;
    var onlyModel = model.value;
    var onlyGroup = group ? group.value : '';
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var match = (needle === '' || r.haystack.indexOf(needle) >= 0)
          && (!onlyWrong || r.wrong)
          && (onlyModel === '' || r.cells[MODEL] === onlyModel)
          && (onlyGroup === '' || r.group === onlyGroup);
      r.tr.hidden = !match;
      if (r.detail) {
        r.detail.hidden = !match || !r.open;
      }
      if (match) {
        shown++;
      }
    }
    count.textContent = shown + ' of ' + rows.length + ' samples';
  }

  // Sorting is stable: equal cells keep the order they had, which is storage order at first.
  var headers = document.querySelectorAll('table.samples th.sortable');
  function sortBy(column, descending) {
    var numeric = numericColumns.indexOf(column) >= 0;
    var ordered = rows.slice().sort(function (a, b) {
      var x = a.cells[column];
      var y = b.cells[column];
      var c;
      if (numeric) {
        // Blank (unscored) sorts after every number, in either direction.
        var nx = x === '' ? NaN : parseFloat(x);
        var ny = y === '' ? NaN : parseFloat(y);
        if (isNaN(nx) || isNaN(ny)) {
          return isNaN(nx) === isNaN(ny) ? a.index - b.index : (isNaN(nx) ? 1 : -1);
        }
        c = nx - ny;
      } else {
        c = x < y ? -1 : (x > y ? 1 : 0);
      }
      if (descending) {
        c = -c;
      }
      return c !== 0 ? c : a.index - b.index;
    });
    var sorted = document.createDocumentFragment();
    ordered.forEach(function (r) {
      sorted.appendChild(r.tr);
      if (r.detail) {
        sorted.appendChild(r.detail);
      }
    });
    body.appendChild(sorted);
    rows = ordered.map(function (r, i) {
      r.index = i;
      return r;
    });
    for (var h = 0; h < headers.length; h++) {
      var own = parseInt(headers[h].getAttribute('data-column'), 10) === column;
      headers[h].setAttribute('aria-sort', own ? (descending ? 'descending' : 'ascending') : 'none');
    }
  }
  Array.prototype.forEach.call(headers, function (th) {
    th.addEventListener('click', function () {
      sortBy(parseInt(th.getAttribute('data-column'), 10), th.getAttribute('aria-sort') === 'ascending');
    });
  });

  function queryFromFragment() {
    return new URLSearchParams(location.hash.slice(1)).get('q') || '';
  }

  function onFragment() {
    box.value = queryFromFragment();
    apply();
  }

  box.addEventListener('input', function () {
    apply();
    // Keep the fragment in step so the address bar is a link to this view; some browsers
    // refuse replaceState on file: pages, and the filter works without it.
    try {
      history.replaceState(null, '', box.value === '' ? location.pathname + location.search
          : '#q=' + encodeURIComponent(box.value));
    } catch (ignored) {
      // The filter itself has been applied; only the address bar is stale.
    }
  });
  wrong.addEventListener('change', apply);
  model.addEventListener('change', apply);
  if (group) {
    group.addEventListener('change', apply);
  }
  window.addEventListener('hashchange', onFragment);
  onFragment();
})();
