// A stdio server on the TypeScript SDK's experimental tasks (2025-11-25): `double` runs as a task in the SDK's
// in-memory task store and completes two seconds later. mcpfuzz's tasks phase runs on it as on any server.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { z } from "zod";

const taskStore = new InMemoryTaskStore();
const server = new McpServer(
  { name: "ts-sdk-tasks-server", version: "0.1.0" },
  { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore },
);

server.experimental.tasks.registerToolTask(
  "double",
  {
    description: "Double an integer, as a task.",
    inputSchema: { n: z.number().int() },
    annotations: { readOnlyHint: true },
    execution: { taskSupport: "optional" },
  },
  {
    createTask: async ({ n }, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval: 100 });
      setTimeout(async () => {
        try {
          await extra.taskStore.storeTaskResult(task.taskId, "completed",
            { content: [{ type: "text", text: String(2 * n) }] });
        } catch {
          // cancelled meanwhile: a terminal task keeps its status
        }
      }, 2000);
      return { task };
    },
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  },
);

await server.connect(new StdioServerTransport());
