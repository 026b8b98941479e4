import { describe, expect, it } from 'vitest';
import { restoreStateOf } from '../../../src/archive/restore-state.js';

describe('restoreStateOf (HeadObject x-amz-restore)', () => {
  it('reads S3 header forms: none, in progress, restored until a date', () => {
    expect(restoreStateOf(undefined)).toEqual({ state: 'needs-restore' });
    expect(restoreStateOf('ongoing-request="true"')).toEqual({ state: 'restore-in-progress' });
    expect(restoreStateOf('ongoing-request="false", expiry-date="Fri, 21 Dec 2012 00:00:00 GMT"')).toEqual({
      state: 'restored',
      until: new Date('2012-12-21T00:00:00Z'),
    });
    expect(restoreStateOf('ongoing-request="false"')).toEqual({ state: 'restored', until: undefined });
    // A header this reader does not know is no readable copy: the read would be refused anyway.
    expect(restoreStateOf('garbage')).toEqual({ state: 'needs-restore' });
  });
});
