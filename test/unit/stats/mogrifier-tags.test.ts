// DogStatsD mogrifiers and the two encodings of EXTRA_TAGS.
import { Mogrifier, nameTagSuffix, tagList } from '../../../src/stats';

describe('Mogrifier', () => {
  const mogrifier = new Mogrifier([
    {
      name: 'RULE',
      pattern: String.raw`^ratelimit\.service\.rate_limit\.([^.]+)\.(.+)\.([^.]+)$`,
      metricName: 'ratelimit.rule.$3',
      tags: { domain: '$1', descriptor: '$2', missing: '$9' },
    },
    { name: 'ANY', pattern: '^ratelimit_server', metricName: 'server.$0', tags: {} },
  ]);

  it('turns a flat name into a name and tags with the first matching pattern', () => {
    expect(mogrifier.apply('ratelimit.service.rate_limit.api.path_/x.total_hits')).toEqual({
      name: 'ratelimit.rule.total_hits',
      tags: ['domain:api', 'descriptor:path_/x', 'missing:$9'],
    });
    expect(mogrifier.apply('ratelimit_server.ShouldRateLimit.total_requests')).toEqual({
      name: 'server.ratelimit_server',
      tags: [],
    });
  });

  it('leaves other names alone', () => {
    expect(mogrifier.apply('ratelimit.service.config_load_success')).toEqual({
      name: 'ratelimit.service.config_load_success',
      tags: [],
    });
  });
});

describe('Mogrifier patterns, as Go reads them', () => {
  const mogrifier = new Mogrifier([
    {
      name: 'GO',
      pattern: String.raw`(?i)^ratelimit\.service\.rate_limit\.(?P<domain>[^.]+)\.([[:alpha:]_]+)$`,
      metricName: 'rule.$2',
      tags: { domain: '$1' },
    },
  ]);

  it('reads (?i), (?P<name>...) and POSIX classes', () => {
    expect(mogrifier.apply('RATELIMIT.service.rate_limit.api.total_hits')).toEqual({
      name: 'rule.total_hits',
      tags: ['domain:api'],
    });
    expect(mogrifier.apply('ratelimit.service.rate_limit.api.d]').tags).toEqual([]);
  });
});

describe('EXTRA_TAGS', () => {
  it('are encoded into statsd names sorted, with . : | replaced', () => {
    expect(nameTagSuffix({ zone: 'eu.1', app: 'rl:v|2', empty: '' })).toBe(
      '.__app=rl_v_2.__zone=eu_1',
    );
    expect(nameTagSuffix({})).toBe('');
  });

  it('become DogStatsD tags', () => {
    expect(tagList({ zone: 'eu.1', app: 'rl' })).toEqual(['app:rl', 'zone:eu_1']);
  });
});
