import { ConfigError, loadConfig } from "../src/config";

describe("tracing settings", () => {
  it("are off unless an OTLP endpoint is set", () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: "gw", OTEL_TRACES_SAMPLER_ARG: "0.5" }).tracing).toBeUndefined();
  });

  it("take the general endpoint with v1/traces appended, or the traces endpoint as given", () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).tracing).toEqual({
      endpoint: "http://collector:4318/v1/traces",
      serviceName: "cargo-gateway",
      sampleRatio: 1,
    });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example/base/" }).tracing?.endpoint).toBe(
      "https://otel.example/base/v1/traces",
    );
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:9999/custom",
      }).tracing?.endpoint,
    ).toBe("http://traces:9999/custom");
  });

  it("read the service name and the parent-based sampler's ratio", () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" };
    expect(loadConfig({ ...on, OTEL_SERVICE_NAME: "gw-eu", OTEL_TRACES_SAMPLER_ARG: "0.25" }).tracing).toMatchObject({
      serviceName: "gw-eu",
      sampleRatio: 0.25,
    });
    expect(loadConfig({ ...on, OTEL_TRACES_SAMPLER: "parentbased_always_off" }).tracing?.sampleRatio).toBe(0);
    expect(loadConfig({ ...on, OTEL_TRACES_SAMPLER: "parentbased_always_on" }).tracing?.sampleRatio).toBe(1);
    expect(loadConfig({ ...on, OTEL_SDK_DISABLED: "true" }).tracing).toBeUndefined();
  });

  it.each([
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", /is not a URL|must start with/],
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "grpc://collector:4317", /must start with http:\/\/ or https:\/\//],
    ["OTEL_TRACES_SAMPLER_ARG", "1.5", /from 0 to 1/],
    ["OTEL_TRACES_SAMPLER_ARG", "half", /from 0 to 1/],
    ["OTEL_TRACES_SAMPLER", "always_on", /must be one of parentbased_traceidratio/],
  ])("refuse %s=%s", (variable, value, message) => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", [variable]: value };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
