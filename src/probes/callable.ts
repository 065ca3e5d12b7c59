/**
 * Which listed tools a plain `tools/call` can exercise at all: one rule, shared by every gatherer.
 */
import type { ListedTool } from '../types.js';

/**
 * Why `tool` cannot be called with a plain tools/call, or undefined when it can: a tool without a
 * string name has no name to call; a tool listed with `execution.taskSupport: "required"` must be
 * called as a task (MCP 2025-11-25 tasks) and refuses every plain call before it reads the
 * arguments, so its reply says nothing about them.
 */
export function uncallable(tool: ListedTool): string | undefined {
  const raw = tool.raw as { name?: unknown; execution?: { taskSupport?: unknown } } | null;
  if (typeof raw?.name !== 'string') return 'the tool has no string name, so it cannot be called';
  if (raw.execution?.taskSupport === 'required') return 'must be called as a task (execution.taskSupport: "required")';
  return undefined;
}
