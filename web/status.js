// The status page's script: polls the debug listener's JSON endpoints and fills the page.
// Plain browser JavaScript, served as it is; data is always written as text, never as HTML.
'use strict';

(function statusPage() {
  const RECENT_POLL_MS = 1000;
  const STATE_POLL_MS = 3000;
  const RULES_POLL_MS = 10000;
  /** Rows kept in the recent table; the endpoint holds more (DEBUG_RECENT_DECISIONS). */
  const RECENT_ROWS = 200;

  const { byId: $, el, badge } = ui;

  async function getJson(path) {
    const res = await fetch(path, { headers: { accept: 'application/json' }, cache: 'no-store' });
    const body = await res.json();
    return { status: res.status, body };
  }

  function localTime(iso) {
    const date = new Date(iso);
    return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
  }

  function ago(iso) {
    const seconds = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
    if (seconds < 90) return `${seconds} s ago`;
    if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
    if (seconds < 129600) return `${Math.round(seconds / 3600)} h ago`;
    return `${Math.round(seconds / 86400)} days ago`;
  }

  function limitText(limit) {
    return `${limit.limit} / ${limit.unit.toLowerCase()}`;
  }

  function cellsRow(cells, props) {
    return el(
      'tr',
      props,
      cells.map((cell) =>
        cell instanceof Node && cell.nodeName === 'TD' ? cell : el('td', {}, cell),
      ),
    );
  }

  function num(value) {
    return el('td', { className: 'num' }, String(value));
  }

  function markUpdated() {
    $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`;
  }

  // ---- Health -------------------------------------------------------------------------------

  /** What an operator must see first: no configuration, an unreachable backend. */
  function problemsOf(body) {
    const byName = new Map(body.components.map((c) => [c.name, c]));
    const problems = [];
    const config = byName.get('config');
    if (config && !config.healthy) {
      problems.push({
        title: 'No configuration loaded',
        detail: ` since ${localTime(config.since)}: no domain has rules (the last refused update is under Rules)`,
      });
    }
    const backend = byName.get('backend');
    if (backend && !backend.healthy) {
      problems.push({
        title: 'Backend unreachable',
        detail: ` since ${localTime(backend.since)} (${ago(backend.since)}): calls that need it fail`,
      });
    }
    return problems;
  }

  function showProblems(problems) {
    const box = $('problems');
    box.hidden = problems.length === 0;
    box.replaceChildren(
      ...problems.map((p) =>
        el('div', { className: 'alert problem' }, [el('strong', {}, p.title), p.detail]),
      ),
    );
  }

  function stateCell(c) {
    const state = badge(c.healthy ? 'healthy' : 'unhealthy', c.healthy ? 'ok' : 'bad');
    const note = c.affectsHealth
      ? []
      : [' ', el('span', { className: 'muted' }, '(not in /healthcheck)')];
    return el('td', {}, [state, ...note]);
  }

  async function refreshHealth() {
    const { body } = await getJson('/health');
    const problems = problemsOf(body);
    $('service').textContent = `${body.service} ${body.version}`;
    const isOk = body.healthy && problems.length === 0;
    document.title = `${isOk ? 'OK' : body.healthy ? 'PROBLEM' : 'UNHEALTHY'} · ${body.service} status`;
    const overall = $('overall');
    overall.className = `badge ${isOk ? 'ok' : 'bad'}`;
    overall.textContent =
      body.healthy && problems.length > 0
        ? problems[0].title.toLowerCase()
        : `${body.healthy ? 'healthy' : 'unhealthy'} since ${localTime(body.since)}`;
    showProblems(problems);
    const rows = body.components.map((c) =>
      cellsRow([
        c.name,
        stateCell(c),
        el('td', { title: c.since }, `${localTime(c.since)} (${ago(c.since)})`),
      ]),
    );
    $('health').tBodies[0].replaceChildren(...rows);
    showXds(body.xds);
  }

  /** The xDS client's connection and last ACK and NACK; hidden when not configured by xDS. */
  function showXds(xds) {
    $('xds-section').hidden = !xds;
    if (!xds) return;
    const when = (event) => (event ? `${localTime(event.at)} (${ago(event.at)})` : 'none');
    const rows = [
      ['server', xds.server],
      [
        'connection',
        badge(xds.connected ? 'connected' : 'disconnected', xds.connected ? 'ok' : 'bad'),
      ],
      ['last ACK', xds.lastAck ? `${xds.lastAck.version} at ${when(xds.lastAck)}` : 'none'],
      ['last NACK', xds.lastNack ? `${xds.lastNack.version} at ${when(xds.lastNack)}` : 'none'],
      ['ACKs / NACKs', `${xds.acks} / ${xds.nacks}`],
    ];
    if (xds.lastNack) rows.push(['NACK reason', xds.lastNack.reason]);
    $('xds').tBodies[0].replaceChildren(
      ...rows.map(([name, value]) =>
        el('tr', {}, [el('th', {}, name), el('td', { className: 'wrap' }, value)]),
      ),
    );
  }

  // ---- Statistics ---------------------------------------------------------------------------

  const RULE_PREFIX = 'ratelimit.service.rate_limit.';
  /** Counters of what the connection and buffer bounds refused, one per reason. */
  const REFUSED_PREFIX = 'ratelimit.server.refused.';
  const HIGHLIGHTS = [
    ['requests', 'gRPC calls', (s) => s.get('ratelimit_server.ShouldRateLimit.total_requests')],
    ['total_hits', 'hits', (s) => s.ruleSum('total_hits')],
    ['over_limit', 'over limit', (s) => s.ruleSum('over_limit')],
    ['near_limit', 'near limit', (s) => s.ruleSum('near_limit')],
    ['shadow_mode', 'shadow mode', (s) => s.ruleSum('shadow_mode')],
    ['local_cache', 'over limit, local cache', (s) => s.ruleSum('over_limit_with_local_cache')],
    [
      'backend_errors',
      'backend errors',
      (s) => s.get('ratelimit.service.call.should_rate_limit.redis_error'),
    ],
    [
      'service_errors',
      'service errors',
      (s) => s.get('ratelimit.service.call.should_rate_limit.service_error'),
    ],
    ['config_loads', 'config loads', (s) => s.get('ratelimit.service.config_load_success')],
    ['config_refusals', 'config refusals', (s) => s.get('ratelimit.service.config_load_error')],
  ];
  let previousStats;

  /** `/stats` is `name: value` lines; rule counters are summed over every rule by suffix. */
  function parseStats(text) {
    const values = new Map();
    for (const line of text.split('\n')) {
      const at = line.lastIndexOf(': ');
      if (at > 0) values.set(line.slice(0, at), Number(line.slice(at + 2)));
    }
    return {
      get: (name) => values.get(name) || 0,
      /** [suffix, value] of every statistic named `prefix` + suffix. */
      under: (prefix) =>
        [...values]
          .filter(([name]) => name.startsWith(prefix))
          .map(([name, value]) => [name.slice(prefix.length), value]),
      ruleSum: (suffix) => {
        let sum = 0;
        for (const [name, value] of values) {
          if (name.startsWith(RULE_PREFIX) && name.endsWith(`.${suffix}`)) sum += value;
        }
        return sum;
      },
    };
  }

  async function refreshStats() {
    const res = await fetch('/stats', { cache: 'no-store' });
    const stats = parseStats(await res.text());
    // With WORKERS, /stats sums every worker's statistics and says how many it summed.
    const workers = Number(res.headers.get('x-ratelimit-workers') || '1');
    $('stats-note').textContent =
      `since start-up${workers > 1 ? `; totals of ${workers} workers` : ''}; rates over the last poll`;
    const now = Date.now();
    const cards = HIGHLIGHTS.map(([id, label, read]) => {
      const value = read(stats);
      let rate = '';
      if (previousStats !== undefined && now > previousStats.at) {
        const perSecond =
          ((value - (previousStats.values[id] || 0)) * 1000) / (now - previousStats.at);
        rate = `${perSecond.toFixed(perSecond < 10 ? 1 : 0)}/s`;
      }
      return el('div', { className: 'card', id: `stat-${id}` }, [
        el('div', { className: 'value' }, value.toLocaleString()),
        el('div', { className: 'label' }, label),
        el('div', { className: 'rate' }, rate),
      ]);
    });
    previousStats = {
      at: now,
      values: Object.fromEntries(HIGHLIGHTS.map(([id, , read]) => [id, read(stats)])),
    };
    $('stats').replaceChildren(...cards);
    $('refusals').textContent = refusalsText(stats);
  }

  /** One line: what the bounds refused since start-up, by reason (docs/observability.md). */
  function refusalsText(stats) {
    const refused = stats.under(REFUSED_PREFIX).filter(([, value]) => value > 0);
    const idle = stats.get('ratelimit.server.idle_closed');
    const parts = refused.map(
      ([reason, value]) => `${reason.replace(/_/g, ' ')} ${value.toLocaleString()}`,
    );
    const what = parts.length === 0 ? 'none' : parts.join(' · ');
    return `Refused by the service's bounds: ${what}; idle connections closed: ${idle.toLocaleString()}`;
  }

  // ---- Recent refusals ----------------------------------------------------------------------

  let lastSeq = 0;

  function decisionRow(d) {
    const mode = d.shadow
      ? badge('shadow: let through', 'warn')
      : badge(d.fromLocalCache ? 'refused (local cache)' : 'refused', 'bad');
    return cellsRow(
      [
        el('td', { title: d.time }, new Date(d.time).toLocaleTimeString()),
        el('td', {}, mode),
        d.domain,
        el('td', {}, el('code', {}, d.descriptorText)),
        el('td', {}, el('code', {}, d.rule)),
        num(limitText(d)),
        num(d.hits),
        num(d.remaining),
      ],
      { className: 'fresh' },
    );
  }

  async function refreshRecent() {
    const { body } = await getJson(`/decisions/recent?after=${lastSeq}&limit=${RECENT_ROWS}`);
    const note = $('recent-note');
    if (!body.enabled) {
      note.textContent = 'recording is off (DEBUG_RECENT_DECISIONS=0)';
      return;
    }
    note.textContent = `${body.total.toLocaleString()} since start-up; the last ${body.capacity.toLocaleString()} are kept`;
    if (body.total < lastSeq) lastSeq = 0; // the service restarted
    if (body.decisions.length === 0) return;
    lastSeq = body.decisions[0].seq;
    const tbody = $('recent').tBodies[0];
    for (const row of tbody.rows) row.classList.remove('fresh');
    tbody.prepend(...body.decisions.map(decisionRow));
    while (tbody.rows.length > RECENT_ROWS) tbody.deleteRow(-1);
    $('recent-empty').hidden = true;
  }

  // ---- Rules --------------------------------------------------------------------------------

  let rules = [];

  function flagsOf(rule) {
    const flags = [];
    if (rule.unlimited) flags.push(['unlimited', 'ok']);
    if (rule.flags.shadowMode) flags.push(['shadow', 'warn']);
    if (rule.flags.quotaMode) flags.push(['quota', 'warn']);
    if (rule.flags.detailedMetric) flags.push(['detailed metric', 'ok']);
    if (rule.flags.valueToMetric) flags.push(['value to metric', 'ok']);
    if (rule.flags.shareThreshold) flags.push(['share threshold', 'ok']);
    if (rule.replaces.length > 0) flags.push([`replaces ${rule.replaces.join(', ')}`, 'ok']);
    return flags;
  }

  function ruleText(rule) {
    return [
      rule.domain,
      rule.pathText,
      rule.statKey,
      rule.name || '',
      rule.source,
      rule.version || '',
      ...rule.limits.map(limitText),
      ...flagsOf(rule).map(([flag]) => flag),
    ]
      .join(' ')
      .toLowerCase();
  }

  /** `k1=v1,k2=v2` with `\\`, `,` and `=` escaped, as /counters reads it. */
  function escapeEntry(text) {
    return text.replace(/[\\,=]/g, (c) => `\\${c}`);
  }

  /** Fills the lookup form from a rule; a key-only or wildcard value is left for the operator. */
  function lookUpRule(rule) {
    $('lookup-domain').value = rule.domain;
    $('lookup-descriptor').value = rule.path
      .map(
        (step) => `${escapeEntry(step.key)}=${step.value === null ? '' : escapeEntry(step.value)}`,
      )
      .join(',');
    $('lookup-descriptor').focus();
  }

  function renderRules() {
    const words = $('rules-filter').value.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = rules.filter((rule) => {
      const text = ruleText(rule);
      return words.every((word) => text.includes(word));
    });
    const rows = shown.map((rule) =>
      cellsRow(
        [
          rule.domain,
          el('td', {}, el('code', {}, rule.pathText)),
          el(
            'td',
            {},
            rule.limits.length === 0 ? 'unlimited' : rule.limits.map(limitText).join(', '),
          ),
          el(
            'td',
            {},
            flagsOf(rule).map(([flag, kind]) => badge(flag, kind)),
          ),
          el('td', {}, [
            el('code', {}, rule.source),
            rule.version ? el('span', { className: 'muted' }, ` (version ${rule.version})`) : '',
          ]),
        ],
        { className: 'clickable', title: 'look up its counter', onclick: () => lookUpRule(rule) },
      ),
    );
    $('rules').tBodies[0].replaceChildren(...rows);
    $('rules-empty').hidden = shown.length > 0;
  }

  function originText(body) {
    if (!body.loaded) return 'no configuration loaded';
    const when = body.loadedAt ? ` at ${localTime(body.loadedAt)}` : '';
    const origin = body.origin;
    if (origin === null) return `loaded${when}`;
    if (origin.kind === 'xds') return `xDS version ${origin.version} from ${origin.server}${when}`;
    return `files in ${origin.directory}${when}`;
  }

  function renderDomains(domains) {
    const select = $('lookup-domain');
    const current = select.value;
    select.replaceChildren(...domains.map((d) => el('option', { value: d }, d)));
    if (domains.includes(current)) select.value = current;
  }

  async function refreshRules() {
    const { body } = await getJson('/rules');
    rules = body.rules;
    $('rules-origin').textContent = `${rules.length} rules · ${originText(body)}`;
    const refused = $('rules-refused');
    if (body.lastRefused) {
      refused.replaceChildren(
        `Update refused at ${localTime(body.lastRefused.at)}; ${body.loaded ? 'the rules below keep serving' : 'nothing is loaded'}:`,
        el(
          'ul',
          {},
          body.lastRefused.errors.map((e) => el('li', {}, e)),
        ),
      );
    }
    // A refusal stays listed on /rules; once a later update loaded, it is history, not news.
    const isCurrent =
      body.lastRefused &&
      (!body.loaded || Date.parse(body.lastRefused.at) >= Date.parse(body.loadedAt));
    refused.hidden = !isCurrent;
    renderDomains(body.domains);
    renderRules();
  }

  // ---- Counter lookup -----------------------------------------------------------------------

  async function lookUp(event) {
    event.preventDefault();
    const params = new URLSearchParams({
      domain: $('lookup-domain').value,
      descriptor: $('lookup-descriptor').value.trim(),
    });
    const error = $('lookup-error');
    const table = $('lookup');
    const { status, body } = await getJson(`/counters?${params}`);
    if (status !== 200) {
      error.textContent = body.error;
      error.hidden = false;
      table.hidden = true;
      return;
    }
    const rows = [];
    for (const d of body.descriptors) {
      if (d.rule === null) {
        rows.push(
          cellsRow([
            el('td', { colSpan: 7, className: 'empty' }, `no rule matches ${d.descriptorText}`),
          ]),
        );
        continue;
      }
      if (d.counters.length === 0) {
        rows.push(
          cellsRow([el('td', { colSpan: 7 }, `${d.rule.statKey}: unlimited, nothing is counted`)]),
        );
      }
      for (const c of d.counters) {
        rows.push(
          cellsRow([
            el('td', { className: 'num count' }, String(c.count)),
            num(c.remaining),
            num(limitText(c)),
            el(
              'td',
              { title: c.windowEnd },
              `${localTime(c.windowEnd)} (in ${c.resetInSeconds} s)`,
            ),
            el('td', {}, el('code', {}, d.rule.statKey)),
            c.algorithm,
            el('td', {}, el('code', {}, c.key)),
          ]),
        );
      }
    }
    $('lookup').tBodies[0].replaceChildren(...rows);
    error.hidden = true;
    table.hidden = false;
  }

  // ---- Polling ------------------------------------------------------------------------------

  /** Runs `task` now and every `ms` after it finishes; a failure shows and the loop goes on. */
  function every(ms, task) {
    const run = async () => {
      if (!document.hidden) {
        try {
          await task();
          markUpdated();
        } catch (err) {
          $('updated').textContent = `cannot reach the service: ${err.message}`;
        }
      }
      setTimeout(run, ms);
    };
    run();
  }

  $('rules-filter').addEventListener('input', renderRules);
  $('lookup-form').addEventListener('submit', (event) => {
    lookUp(event).catch((err) => {
      $('lookup-error').textContent = `lookup failed: ${err.message}`;
      $('lookup-error').hidden = false;
    });
  });
  every(RECENT_POLL_MS, refreshRecent);
  every(STATE_POLL_MS, () => Promise.all([refreshHealth(), refreshStats()]));
  every(RULES_POLL_MS, refreshRules);
})();
