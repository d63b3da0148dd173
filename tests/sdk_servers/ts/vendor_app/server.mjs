// A server whose entry imports only its vendor's command package; the vendor's core package imports the
// TypeScript SDK 2.x (from tests/sdk_servers/ts/node_modules), and a UI helper the core imports lists the SDK 1.x
// as a dependency (its own nested copy) without importing it at run time. What runs is the 2.x.
import { main } from "@acme/mcp-cli";

await main(process.argv.slice(2));
