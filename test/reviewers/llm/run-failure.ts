import { RunFailure } from '../../../src/core/failures';

/** The RunFailure `promise` rejects with; any other outcome fails the test. */
export async function failure(promise: Promise<unknown>): Promise<RunFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RunFailure) return error;
    throw error;
  }
  throw new Error('expected the review to fail');
}
