// The simulator admin page's script: polls GET /status and drives the admin routes.
// Plain browser JavaScript, served as it is; data is always written as text, never as HTML.
'use strict';

(function simPage() {
  const POLL_MS = 1000;

  const { byId: $, el, badge } = ui;

  function localTime(iso) {
    return iso ? new Date(iso).toLocaleTimeString() : '';
  }

  /** Where a node stands with the version it was last sent. */
  function nodeState(node) {
    if (node.connectedStreams === 0) return badge('disconnected', 'warn');
    if (node.lastSentVersion === undefined) return badge('connected', 'ok');
    if (node.lastAckVersion === node.lastSentVersion) return badge('ACKed', 'ok');
    if (node.lastNack && node.lastNack.version === node.lastSentVersion) {
      return badge('NACKed', 'bad');
    }
    return badge('waiting', 'warn');
  }

  function versionAt(version, at) {
    return [
      el('code', {}, version || ''),
      at ? el('div', { className: 'muted' }, localTime(at)) : '',
    ];
  }

  /**
   * A node's row, and under it a row with its last NACK's error across the whole table, so the
   * error reads on a phone without scrolling sideways.
   */
  function nodeRows([id, node]) {
    const nack = node.lastNack;
    const rows = [
      el('tr', { className: 'node' }, [
        el('td', {}, el('code', {}, id || '(no id)')),
        el('td', { className: 'state' }, nodeState(node)),
        el('td', { className: 'ack' }, versionAt(node.lastAckVersion, node.lastAckAt)),
        el('td', { className: 'nack' }, nack ? versionAt(nack.version, nack.at) : ''),
        el('td', {}, el('code', {}, node.lastSentVersion || '')),
        el('td', { className: 'num streams' }, String(node.connectedStreams)),
        el('td', {}, node.userAgent || ''),
      ]),
    ];
    if (nack) {
      rows.push(
        el('tr', { className: 'nack-detail' }, [
          el('td', { colSpan: 7, className: 'wrap' }, [
            el('div', { className: 'alert' }, [
              el('strong', {}, `${id} NACKed version ${nack.version || ''}: `),
              nack.message,
            ]),
          ]),
        ]),
      );
    }
    return rows;
  }

  async function refresh() {
    const res = await fetch('/status', { cache: 'no-store' });
    const status = await res.json();
    $('version').className = 'badge ok';
    $('version').textContent = `version ${status.version}`;
    const nodes = Object.entries(status.nodes).sort(([a], [b]) => (a < b ? -1 : 1));
    $('nodes').tBodies[0].replaceChildren(...nodes.flatMap(nodeRows));
    $('nodes-empty').hidden = nodes.length > 0;
    $('resources').replaceChildren(
      ...status.resources.map((name) =>
        el('li', {}, [
          el('code', {}, name),
          status.pushed.includes(name) ? ' (pushed through the admin API)' : '',
          name === 'bad-resource' ? el('span', {}, [' ', badge('bad on purpose', 'bad')]) : '',
        ]),
      ),
    );
    $('resources-note').textContent = `${status.resources.length} in version ${status.version}`;
    $('versions').tBodies[0].replaceChildren(
      ...status.versions.map((v) =>
        el('tr', {}, [
          el('td', {}, el('code', {}, v.version)),
          el('td', {}, localTime(v.at)),
          el('td', {}, v.resources.join(', ') || '(none)'),
        ]),
      ),
    );
    $('bad-on').disabled = status.isBadResourceOn;
    $('bad-off').disabled = !status.isBadResourceOn;
    $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
  }

  /** Sends one admin request, says what came back, and refreshes at once. */
  async function act(method, path, what) {
    const res = await fetch(path, { method });
    const body = await res.json();
    const result = $('action-result');
    if (res.status !== 200) {
      result.textContent = `${what} failed: ${body.error}`;
    } else if (body.disconnected !== undefined) {
      result.textContent = `${what}: ${body.disconnected} streams ended`;
    } else {
      result.textContent = `${what}: version ${body.version}`;
    }
    await refresh();
  }

  function button(id, method, path, what) {
    $(id).addEventListener('click', () => {
      act(method, path, what).catch((err) => {
        $('action-result').textContent = `${what} failed: ${err.message}`;
      });
    });
  }

  button('republish', 'POST', '/republish', 'Pushed the directory again');
  button('bad-on', 'POST', '/bad-resource', 'Pushed a bad resource');
  button('bad-off', 'DELETE', '/bad-resource', 'Removed the bad resource');
  button('disconnect', 'POST', '/disconnect', 'Dropped the streams');

  const poll = async () => {
    try {
      await refresh();
    } catch (err) {
      $('updated').textContent = `cannot reach the simulator: ${err.message}`;
    }
    setTimeout(poll, POLL_MS);
  };
  poll();
})();
