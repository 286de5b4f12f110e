// kiln mcp driven by the official MCP TypeScript SDK client (@modelcontextprotocol/sdk):
// initialize, tools and resources, evaluations that pass, fail numerically and fail to compile,
// get_run, tool errors an agent can act on, and the cancellation of a long evaluation.
//
// usage: node mcp_client_test.mjs KILN_BINARY HARNESS_ADDRESS
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [kiln, harness] = process.argv.slice(2);
const workload = {
  uuid: "7f0ffe00-0000-4000-8000-000000004096",
  axes: { n: 4096 },
  inputs: { a: { type: "random" }, b: { type: "random" } },
};
// The host ABI: inputs, then outputs; 0 is success.
const source = (body) => `#include <kiln/abi.h>
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  for (int64_t i = 0; i < args[0].shape[0]; ++i) {
    ${body}
  }
  return 0;
}
`;
const evaluateArgs = (body) => ({
  definition: "vector_add_f32",
  files: { "solution.cc": source(body) },
  language: "cpp",
  entry_point: "solution.cc::run",
  workloads: [workload],
});

let failures = 0;
async function check(name, fn) {
  const started = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - started} ms)`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}

const transport = new StdioClientTransport({
  command: kiln,
  args: ["mcp", "--server", harness],
  stderr: "inherit",
});
const client = new Client({ name: "kiln-mcp-sdk-test", version: "1.0.0" });
await client.connect(transport);

await check("initialize names the server and its capabilities", async () => {
  assert.equal(client.getServerVersion().name, "kiln");
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools, "tools capability");
  assert.ok(caps.resources, "resources capability");
  assert.match(client.getInstructions() ?? "", /evaluate/);
});

await check("tools/list offers the five tools with input schemas", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["evaluate", "get_run", "leaderboard", "list_definitions", "show_definition"]);
  const evaluate = tools.find((t) => t.name === "evaluate");
  assert.deepEqual(evaluate.inputSchema.required, ["definition"]);
  assert.ok(evaluate.inputSchema.properties.files);
});

await check("list_definitions and show_definition describe the problems", async () => {
  const defs = await client.callTool({ name: "list_definitions", arguments: {} });
  assert.equal(defs.isError, false);
  assert.match(defs.content[0].text, /vector_add_f32/);
  const shown = await client.callTool({ name: "show_definition", arguments: { name: "vector_add_f32" } });
  assert.equal(shown.isError, false);
  assert.ok(shown.structuredContent.workloads.length > 0, "workloads listed");
  assert.equal(shown.structuredContent.definition.name, "vector_add_f32");
  assert.match(shown.content[0].text, /workloads:/);
});

await check("an unknown definition is a tool error naming the registered ones", async () => {
  const r = await client.callTool({ name: "show_definition", arguments: { name: "vector_add_f3" } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /unknown definition 'vector_add_f3' \(registered on this node: .*vector_add_f32/);
});

let passedRun;
await check("evaluate: a correct solution PASSES, with progress notifications", async () => {
  const progress = [];
  const r = await client.callTool({ name: "evaluate", arguments: evaluateArgs("c[i] = a[i] + b[i];") },
    undefined, { onprogress: (p) => progress.push(p), timeout: 300000 });
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(r.structuredContent.status, "PASSED");
  assert.match(r.content[0].text, /PASSED/);
  assert.ok(progress.length >= 2, `progress notifications: ${progress.length}`);
  assert.ok(progress.some((p) => /admitted/.test(p.message)));
  // Whose work it is: the reference's lines are labelled, the candidate's name the workload.
  const lines = progress.map((p) => p.message).join(" | ");
  assert.ok(progress.some((p) => /^reference for workload 1\/\d+: verifying$/.test(p.message)), lines);
  assert.ok(progress.some((p) => /^workload 1\/\d+: verifying$/.test(p.message)), lines);
  passedRun = r.structuredContent.run_id;
});

await check("evaluate: a wrong solution is INCORRECT_NUMERICAL with the reason", async () => {
  const r = await client.callTool({ name: "evaluate", arguments: evaluateArgs("c[i] = a[i] - b[i];") },
    undefined, { timeout: 300000 });
  assert.equal(r.isError, false, "a verdict is an answer, not a tool failure");
  assert.equal(r.structuredContent.status, "INCORRECT_NUMERICAL");
  assert.match(r.content[0].text, /INCORRECT_NUMERICAL/);
  assert.match(r.content[0].text, /output 'c'/);
});

await check("evaluate: an integrity failure is REJECTED with the check's advice", async () => {
  // Never writes its output: kiln's poison is still there.
  const r = await client.callTool({ name: "evaluate", arguments: evaluateArgs("(void)c;") },
    undefined, { timeout: 300000 });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.status, "REJECTED");
  assert.match(r.content[0].text, /integrity\./);
  assert.match(r.content[0].text, /what to do: /);
});

await check("evaluate: a compile error shows the compiler's file:line", async () => {
  const r = await client.callTool({ name: "evaluate", arguments: evaluateArgs("c[i] = a[i] + b[i]") },
    undefined, { timeout: 300000 });
  assert.equal(r.structuredContent.status, "COMPILE_ERROR");
  assert.match(r.content[0].text, /solution\.cc:\d+/);
});

await check("evaluate: a bad argument is a tool error naming the field", async () => {
  const r = await client.callTool({ name: "evaluate", arguments: { definition: "vector_add_f32", files: { "solution.cc": "x" } } });
  assert.equal(r.isError, true);
  assert.match(r.content[0].text, /arguments\.language: required with `files`/);
});

await check("get_run reads the evaluation again; resources list and read", async () => {
  const r = await client.callTool({ name: "get_run", arguments: { run_id: passedRun.slice(-8) } });
  assert.equal(r.isError, false, r.content[0].text);
  assert.equal(r.structuredContent.run_id, passedRun);
  assert.equal(r.structuredContent.status, "PASSED");
  const { resources } = await client.listResources();
  assert.ok(resources.some((x) => x.uri === "kiln://definitions/vector_add_f32"));
  const read = await client.readResource({ uri: `kiln://runs/${passedRun}` });
  assert.equal(JSON.parse(read.contents[0].text).status, "PASSED");
  await assert.rejects(client.readResource({ uri: "kiln://nothing/here" }), /resource not found/);
});

await check("cancelling a long evaluation cancels its run", async () => {
  const controller = new AbortController();
  let runId;
  const spin = "for (volatile long k = 0; k < 2000000000L; ++k) {} c[i] = a[i] + b[i];";
  const call = client.callTool({ name: "evaluate", arguments: evaluateArgs(spin) }, undefined, {
    signal: controller.signal,
    timeout: 300000,
    onprogress: (p) => {
      const m = /run (\w+) admitted/.exec(p.message);
      if (m && !runId) {
        runId = m[1];
        setTimeout(() => controller.abort("the agent changed its mind"), 1500);
      }
    },
  });
  await assert.rejects(call);
  assert.ok(runId, "the run was admitted before the abort");
  let status;
  for (let i = 0; i < 120 && status !== "CANCELLED"; i++) {
    const r = await client.callTool({ name: "get_run", arguments: { run_id: runId } });
    status = r.structuredContent?.status;
    if (status !== "CANCELLED") await new Promise((done) => setTimeout(done, 500));
  }
  assert.equal(status, "CANCELLED");
  // The session goes on after a cancellation.
  await client.ping();
});

await client.close();
if (failures > 0) {
  console.log(`${failures} check(s) failed`);
  process.exit(1);
}
console.log("all checks passed");
