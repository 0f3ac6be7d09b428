// exactav-session.js - the viewer's side of a stepctl session (docs/player.md).
//
// Takes the 201 body of POST /v1/allocations and a <video> element, creates
// the hls.js 1.7.4 player with the body's session.cmcd configuration (CMCD v2
// event reports to session.report_url) and loads playback_url.  It adds the
// two facts CMCD does not carry, as CMCD custom events:
//   - the first presented frame's time from requestVideoFrameCallback, where
//     the browser has it (key com.exactav-rvfc-ms: ms since the Unix epoch,
//     the clock of CMCD's ts).  Caveat: it is a compositor callback, not proof
//     that a person saw the frame;
//   - an autoplay refusal (cen com.exactav-autoplay-refused) and a user exit
//     before the first frame (cen com.exactav-exit-before-start).  The exit is
//     sent on pagehide with navigator.sendBeacon in the CMCD query form (a
//     beacon cannot send application/cmcd), numbered after the last report
//     hls.js sent so the service can place it.
// And it makes sure a fatal hls.js error reaches the service: when hls.js's
// own CMCD reporter has not sent a record with sta=f or e=e by the time the
// kit hears the fatal Hls.Events.ERROR, the kit POSTs one itself to the same
// report target (e=e, ec, sta=f: CTA-5004-B's error event and fatal play
// state), numbered after the last report, so the session is a failure and
// not an unknown (docs/player.md).
// No dependency but hls.js 1.7.4 (pinned, from the npm registry); pass its
// default export as Hls.

const RVFC_KEY = 'com.exactav-rvfc-ms';
const FIRST_FRAME = 'com.exactav-first-frame';
const AUTOPLAY_REFUSED = 'com.exactav-autoplay-refused';
const EXIT_BEFORE_START = 'com.exactav-exit-before-start';

// A record of a fatal error in an application/cmcd body: CTA-5004-B's
// error event (e=e) or fatal-error play state (sta=f).
const FATAL_RECORD = /(?:^|,)(?:e=e|sta=f)(?:,|$)/m;

// The greatest sn in an application/cmcd body (one record a line).
function lastSn(body, previous) {
  let sn = previous;
  for (const m of String(body || '').matchAll(/(?:^|,)sn=(\d+)/gm))
    sn = Math.max(sn, Number(m[1]));
  return sn;
}

export function startSession(Hls, body, video) {
  const session = body.session;
  // sn: the greatest sn sent so far (-1: none; hls.js numbers from 0).
  const state = { reporter: null, sn: -1, firstFrame: false, stopped: false, fatal: false,
                  fatalSent: false };
  const cmcd = {
    ...session.cmcd,
    // A function cannot travel in JSON: added here.
    reporterCallback: (reporter) => { state.reporter = reporter; },
    // hls.js's own report requests, watched for their sn; a 410 (the session
    // ended or is unknown) stops the reports.
    loader: async ({ url, method, headers, body: payload }) => {
      state.sn = lastSn(payload, state.sn);
      state.fatalSent = state.fatalSent || FATAL_RECORD.test(String(payload || ''));
      if (state.stopped)
        return { status: 410 };
      const r = await fetch(url, { method: method || 'POST', headers, body: payload, keepalive: true });
      if (r.status === 410)
        state.stopped = true;
      return { status: r.status };
    },
  };
  const hls = new Hls({ cmcd });
  const custom = (name, data) => { if (state.reporter) state.reporter.recordCustomEvent(name, data); };
  if (typeof video.requestVideoFrameCallback === 'function') {
    video.requestVideoFrameCallback((now, meta) => {
      state.firstFrame = true;
      const at = Math.round(performance.timeOrigin + (meta && meta.presentationTime ? meta.presentationTime : now));
      custom(FIRST_FRAME, { [RVFC_KEY]: at });
    });
  } else {
    video.addEventListener('playing', () => { state.firstFrame = true; }, { once: true });
  }
  const onHide = () => {
    if (state.firstFrame || state.stopped || state.fatal)
      return;
    const record = `e=ce,cen="${EXIT_BEFORE_START}",sn=${state.sn + 1},ts=${Date.now()},v=2`;
    navigator.sendBeacon(`${session.report_url}?CMCD=${encodeURIComponent(record)}`);
    state.stopped = true;
  };
  window.addEventListener('pagehide', onHide);
  // hls.js's own reporter hears the error first (its listener was added in
  // the constructor); after this turn of the event loop its record, if any,
  // has gone through the loader above.
  hls.on(Hls.Events.ERROR, (event, data) => {
    if (!data || !data.fatal || state.fatal)
      return;
    state.fatal = true;
    setTimeout(() => {
      if (state.fatalSent || state.stopped)
        return;
      const ec = String(data.details || 'fatal').replace(/[^A-Za-z0-9_.:-]/g, '');
      const record = `e=e,ec=("${ec}"),sid="${session.id}",sn=${state.sn + 1},sta=f,ts=${Date.now()},v=2`;
      state.sn += 1;
      state.fatalSent = true;
      fetch(session.report_url, { method: 'POST', headers: { 'Content-Type': 'application/cmcd' },
                                  body: `${record}\n`, keepalive: true }).catch(() => {});
    }, 0);
  });
  hls.attachMedia(video);
  hls.loadSource(body.playback_url);
  hls.once(Hls.Events.MANIFEST_PARSED, () => {
    const p = video.play();
    if (p && p.catch)
      p.catch((err) => { if (err && err.name === 'NotAllowedError') custom(AUTOPLAY_REFUSED); });
  });
  return {
    hls,
    stop() { window.removeEventListener('pagehide', onHide); hls.destroy(); },
  };
}
