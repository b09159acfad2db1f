// Builds the samples table from the embedded JSON and filters it. Sample text is untrusted:
// it only ever goes into textContent, never into innerHTML.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('panoptes-data').textContent);
  var longColumns = data.sampleLongColumns;
  var body = document.getElementById('sample-rows');
  var box = document.getElementById('sample-search');
  var count = document.getElementById('sample-count');
  var rows = [];
  var haystacks = [];
  var fragment = document.createDocumentFragment();
  data.samples.forEach(function (sample) {
    var tr = document.createElement('tr');
    tr.className = 'sample';
    sample.forEach(function (value, column) {
      var td = document.createElement('td');
      if (longColumns.indexOf(column) >= 0) {
        var div = document.createElement('div');
        div.textContent = value;
        td.className = 'long';
        td.appendChild(div);
      } else {
        td.textContent = value;
      }
      tr.appendChild(td);
    });
    rows.push(tr);
    haystacks.push(sample.join('\u0000').toLowerCase());
    fragment.appendChild(tr);
  });
  body.appendChild(fragment);

  // Rows that do not match get the hidden attribute (display: none).
  function apply(query) {
    var needle = query.toLowerCase();
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var match = needle === '' || haystacks[i].indexOf(needle) >= 0;
      rows[i].hidden = !match;
      if (match) {
        shown++;
      }
    }
    count.textContent = shown + ' of ' + rows.length + ' samples';
  }

  function queryFromFragment() {
    return new URLSearchParams(location.hash.slice(1)).get('q') || '';
  }

  function onFragment() {
    box.value = queryFromFragment();
    apply(box.value);
  }

  box.addEventListener('input', function () {
    apply(box.value);
    // Keep the fragment in step so the address bar is a link to this view; some browsers
    // refuse replaceState on file: pages, and the filter works without it.
    try {
      history.replaceState(null, '', box.value === '' ? location.pathname + location.search
          : '#q=' + encodeURIComponent(box.value));
    } catch (ignored) {
      // The filter itself has been applied; only the address bar is stale.
    }
  });
  window.addEventListener('hashchange', onFragment);
  onFragment();
})();
