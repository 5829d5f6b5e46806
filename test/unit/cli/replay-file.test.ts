// The request file of ratelimit-client -replay: POST /json bodies, one a line, every wrong line
// reported with its number.
import { parseReplayFile } from '../../../src/cli/replay-file';

describe('parseReplayFile', () => {
  it('reads each line as a /json body, skipping blank and # lines, and keeps line numbers', () => {
    const file = parseReplayFile(
      [
        '# comment',
        '{"domain":"d","descriptors":[{"entries":[{"key":"a","value":"1"}]}],"hits_addend":2}',
        '',
        '{"domain":"d","descriptors":[{"entries":[{"key":"b","value":"2"}],"hits_addend":0,"limit":{"requests_per_unit":3,"unit":"HOUR"}}]}',
      ].join('\n'),
    );
    expect('requests' in file && file.requests.map((r) => [r.line, r.wire])).toEqual([
      [2, { domain: 'd', descriptors: [{ entries: [{ key: 'a', value: '1' }] }], hitsAddend: 2 }],
      [
        4,
        {
          domain: 'd',
          descriptors: [
            {
              entries: [{ key: 'b', value: '2' }],
              limit: { requestsPerUnit: 3, unit: 'HOUR' },
              hitsAddend: { value: 0 },
            },
          ],
          hitsAddend: 0,
        },
      ],
    ]);
  });

  it('reports every wrong line, not only the first', () => {
    const file = parseReplayFile('{"domain":"d"}\nnot json\n{"domain":"d","descriptor":[]}\n');
    expect('errors' in file && file.errors).toEqual([
      expect.stringMatching(/^line 2: the body is not valid JSON/),
      'line 3: the request has an unknown field "descriptor"',
    ]);
  });

  it('refuses a file without a request', () => {
    expect(parseReplayFile('# only a comment\n\n')).toEqual({
      errors: ['the file holds no request'],
    });
  });
});
