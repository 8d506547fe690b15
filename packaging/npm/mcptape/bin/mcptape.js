#!/usr/bin/env node
// mcptape's npm launcher. The binary itself ships in one package per platform
// (@mcptape/linux-x64, …), named in this package's optionalDependencies: npm installs the
// one whose `os` and `cpu` match and skips the others, so nothing is downloaded at install
// time (no postinstall). This file finds that binary and runs it as transparently as a
// shell would: the same arguments, the same stdin/stdout/stderr (inherited, untouched: as
// an MCP stdio server it is the protocol pipe), signals passed on, and the same exit
// status (a binary killed by a signal kills this process with the same signal).
// No dependencies, CommonJS, so that any supported Node runs it as is.
'use strict';

const { spawn } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const tty = require('node:tty');

// The platforms a package is published for (`${process.platform}-${process.arch}`).
const PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];

function fail(message, status) {
  process.stderr.write(`mcptape (npm launcher): ${message}\n`);
  process.exit(status);
}

// The path of the binary in the installed platform package; exits 127 (a command that
// is not there) naming the package to install when it is missing.
function binaryPath() {
  const key = `${process.platform}-${process.arch}`;
  const pkg = `@mcptape/${key}`;
  const exe = process.platform === 'win32' ? 'mcptape.exe' : 'mcptape';
  try {
    return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'bin', exe);
  } catch {
    const { version } = require('../package.json');
    if (!PLATFORMS.includes(key)) {
      fail(
        `no npm package of mcptape is built for ${key}; ` +
          'build it from source instead: cargo install --locked mcptape',
        127,
      );
    }
    fail(
      `the package ${pkg}, which holds mcptape's binary for ${key}, is not installed. ` +
        `It is an optional dependency of mcptape: install it with \`npm install ${pkg}@${version}\` ` +
        '(or reinstall without --omit=optional / --no-optional)',
      127,
    );
  }
}

function main() {
  const binary = binaryPath();
  const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });

  // SIGTERM and SIGHUP sent to us are passed on. A terminal's Ctrl-C already reached the
  // binary (it runs in our process group), so SIGINT is passed on only when we are not on
  // a terminal (kill -INT, timeout -s INT): either way the binary decides, and we wait.
  const passOn = {
    SIGTERM: () => child.kill('SIGTERM'),
    SIGHUP: () => child.kill('SIGHUP'),
    SIGINT: () => {
      if (!tty.isatty(0)) child.kill('SIGINT');
    },
  };
  for (const [signal, handler] of Object.entries(passOn)) process.on(signal, handler);

  child.on('error', (err) => {
    fail(`cannot run ${binary}: ${err.message}`, err.code === 'ENOENT' ? 127 : 126);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      // Die of the same signal, so that our parent sees what it would have seen without
      // us; where that is not possible (Windows, an ignored signal), 128+N.
      for (const [name, handler] of Object.entries(passOn)) process.removeListener(name, handler);
      try {
        process.kill(process.pid, signal);
      } catch {
        // fall through to the exit status below
      }
      process.exit(128 + (os.constants.signals[signal] || 0));
    }
    process.exit(code === null ? 1 : code);
  });
}

main();
