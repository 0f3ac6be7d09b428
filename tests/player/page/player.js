/* The real-player page: plays ?src= (a multivariant or media playlist) with
 * hls.js in a <video>, and every ?period= ms (default 500) POSTs a report to
 * ?report= (default /report, the page's own origin).  ?credentials=1 sends
 * cookies with every request (signed cookies on another origin).
 *
 * A report is one JSON object (docs/testing.md): seq, t_ms (since load),
 * hls_version, supported, current_time, paused, ready_state, buffered_end,
 * pathway (of the level being loaded), pathway_priority, steering (manifests
 * loaded), frags (the last 200 loaded: sn, level, pathway, url, t_ms),
 * requests (the last 300 URLs hls.js asked for), request_counts (per origin,
 * never capped), errors (the last 100), fatal.  Signing values in URLs are
 * replaced by REDACTED before anything leaves the page. */
(function () {
  'use strict';
  var params = new URLSearchParams(location.search);
  var src = params.get('src');
  var reportUrl = params.get('report') || '/report';
  var period = Number(params.get('period') || 500);
  var credentials = params.get('credentials') === '1';
  var SECRET = /([?&](?:Policy|Signature|Key-Pair-Id|Expires)=)[^&]*/g;
  var t0 = performance.now();
  var seq = 0;
  var video = document.getElementById('video');

  function now() { return Math.round(performance.now() - t0); }
  function redact(u) { return u ? String(u).replace(SECRET, '$1REDACTED') : null; }
  function push(list, item, max) {
    list.push(item);
    if (list.length > max) list.splice(0, list.length - max);
  }
  function origin(u) {
    try { return new URL(u, location.href).origin; } catch (e) { return 'invalid'; }
  }

  var state = {
    src: redact(src), hls_version: window.Hls ? Hls.version : null,
    supported: !!(window.Hls && Hls.isSupported()),
    current_time: 0, paused: true, ready_state: 0, buffered_end: 0,
    pathway: null, pathway_priority: null, steering: [], frags: [], requests: [],
    request_counts: {}, errors: [], fatal: false
  };

  function report() {
    state.seq = ++seq;
    state.t_ms = now();
    state.current_time = video.currentTime;
    state.paused = video.paused;
    state.ready_state = video.readyState;
    var b = video.buffered;
    state.buffered_end = b.length ? b.end(b.length - 1) : 0;
    if (hls) {
      var lvl = hls.levels && hls.levels[Math.max(0, hls.loadLevel)];
      state.pathway = lvl ? lvl.pathwayId : null;
      state.pathway_priority = hls.pathwayPriority || null;
    }
    fetch(reportUrl, { method: 'POST', body: JSON.stringify(state),
                       headers: { 'Content-Type': 'application/json' } }).catch(function () {});
  }

  var hls = null;
  if (!src || !state.supported) {
    push(state.errors, { t_ms: now(), type: 'page', details: src ? 'hls.js not supported' : 'no ?src=',
                         fatal: true }, 100);
    state.fatal = true;
  } else {
    hls = new Hls({
      xhrSetup: function (xhr, url) {
        xhr.withCredentials = credentials;
        push(state.requests, redact(url), 300);
        var o = origin(url);
        state.request_counts[o] = (state.request_counts[o] || 0) + 1;
      }
    });
    hls.on(Hls.Events.STEERING_MANIFEST_LOADED, function (ev, data) {
      push(state.steering, { t_ms: now(), url: redact(data.url),
                             priority: data.steeringManifest['PATHWAY-PRIORITY'] || null }, 50);
    });
    hls.on(Hls.Events.FRAG_LOADED, function (ev, data) {
      var f = data.frag;
      var lvl = hls.levels[f.level];
      push(state.frags, { t_ms: now(), sn: f.sn, level: f.level,
                          pathway: lvl ? lvl.pathwayId : null, url: redact(f.url) }, 200);
    });
    hls.on(Hls.Events.ERROR, function (ev, data) {
      var url = data.url || (data.frag && data.frag.url) || (data.context && data.context.url);
      push(state.errors, { t_ms: now(), type: data.type, details: data.details, fatal: !!data.fatal,
                           code: data.response ? data.response.code : null, url: redact(url) }, 100);
      if (data.fatal) state.fatal = true;
    });
    hls.on(Hls.Events.MANIFEST_PARSED, function () {
      var p = video.play();
      if (p && p.catch) p.catch(function (e) {
        push(state.errors, { t_ms: now(), type: 'page', details: 'play(): ' + e, fatal: false }, 100);
      });
    });
    hls.attachMedia(video);
    hls.loadSource(src);
  }
  setInterval(report, period);
  report();
})();
