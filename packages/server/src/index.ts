export { type AppRouter, buildOpenApiDocument } from './api';
export { buildApp } from './app';
export { loadConfig, logFormatOf, type ServerConfig } from './env';
export { logsAsJson, serve, startFailure, startFailureLine } from './serve';
export { type ConveneServer, createServer } from './server';
