/**
 * The prompt a looped-in reply becomes (spec §4.6.4): the reply's own text, marked as a reply from its
 * author on that thread, so the agent reads the answer itself (not only that one exists) and knows where
 * to answer.
 */
export function replyPrompt(r: { thread: string; what: string; by: string; body: string }): string {
  return `Reply from ${r.by} on ${r.what} ${r.thread}:\n\n${r.body}\n\n(answer on the thread: trellis issue reply ${r.thread} --body ...)`;
}
