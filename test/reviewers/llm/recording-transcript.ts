import type { ModelTranscript } from '../../../src/reviewers/types';

/** A transcript that keeps what it was given, in order, with the first-token moment among it. */
export function recordingTranscript() {
  const events: { role: string; content: string; data?: Record<string, unknown> }[] = [];
  const transcript: ModelTranscript = {
    async write(role, content, data) {
      events.push({ role, content, ...(data ? { data } : {}) });
    },
    firstToken() {
      events.push({ role: 'first-token', content: '' });
    },
  };
  return { events, transcript };
}
