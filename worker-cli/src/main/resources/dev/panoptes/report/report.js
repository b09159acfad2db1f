// Builds the samples table from the embedded JSON, filters it (text, wrong only, model, group)
// and sorts it by a clicked header. Sample text is untrusted: it only ever goes into
// textContent or a title, never into innerHTML.
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
  var rows = [];
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
    rows.push({
      tr: tr,
      cells: sample,
      index: index,
      haystack: sample.join('\u0000').toLowerCase(),
      wrong: !isNaN(score) && score < 1,
      group: data.sampleGroups ? data.sampleGroups[index] : ''
    });
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
