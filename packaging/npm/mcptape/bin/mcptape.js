#!/usr/bin/env node
// mcptape's npm launcher. The binary itself ships in one package per platform
// (@mcptape/linux-x64, …), named in this package's optionalDependencies: npm installs the
// one whose `os` and `cpu` match and skips the others, so nothing is downloaded at install
// time (no postinstall). This file finds that binary and runs it as transparently as a
// shell would: the same arguments, the same stdin/stdout/stderr (inherited, untouched: as
// an MCP stdio server it is the protocol pipe), signals passed on, and the same exit
// status (a binary killed by one of the signals in RERAISE kills this process with the
// same signal; any other signal gives 128+N).
// No dependencies, CommonJS, so that any supported Node runs it as is.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const tty = require('node:tty');

// The platforms a package is published for (`${process.platform}-${process.arch}`).
const PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];

// The signals this process re-raises on itself when the binary died of one: those whose
// default action Node leaves alone, so that raising one ends us as it ended the binary.
// Not the others: Node keeps SIGUSR1 for its inspector (raised, it opens a debugger port
// instead), ignores SIGPIPE, and V8 handles SIGSEGV-like faults; and re-raising SIGABRT,
// SIGSEGV and the other core-dumping faults would dump a core of Node, not of mcptape.
// For those our exit status is 128+N, as a shell reports a death by signal N.
const RERAISE = new Set(['SIGHUP', 'SIGINT', 'SIGQUIT', 'SIGTERM', 'SIGKILL', 'SIGALRM']);

// True when stdin is our controlling terminal and we are in its foreground process group,
// where the terminal's Ctrl-C reaches the whole group, the binary included: the rule of
// src/process.rs (`tcgetpgrp(stdin) == getpgrp()`), read from /proc/self/stat (pgrp,
// tty_nr, tpgid) since Node has no tcgetpgrp. Without /proc (macOS), a terminal on stdin
// is taken as the foreground.
function inTerminalForeground() {
  if (!tty.isatty(0)) return false;
  let stat;
  try {
    stat = fs.readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return true;
  }
  // After the command's name: state ppid pgrp session tty_nr tpgid …
  const [, , pgrp, , ttyNr, tpgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(ttyNr) === fs.fstatSync(0).rdev && tpgid === pgrp;
}

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
  // binary (it runs in our process group), so SIGINT is passed on only when we are not in
  // the foreground of the terminal on stdin (kill -INT, timeout -s INT, a background
  // job): either way the binary decides, and we wait. In the foreground, a `kill -INT`
  // of this process alone is not passed on (mcptape's own wrapped commands, src/process.rs,
  // follow the same rule).
  const passOn = {
    SIGTERM: () => child.kill('SIGTERM'),
    SIGHUP: () => child.kill('SIGHUP'),
    SIGINT: () => {
      if (!inTerminalForeground()) child.kill('SIGINT');
    },
  };
  for (const [signal, handler] of Object.entries(passOn)) process.on(signal, handler);

  child.on('error', (err) => {
    fail(`cannot run ${binary}: ${err.message}`, err.code === 'ENOENT' ? 127 : 126);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      // Die of the same signal, so that our parent sees what it would have seen without
      // us; where that is not possible (Windows, a signal not in RERAISE), 128+N.
      if (RERAISE.has(signal)) {
        for (const [name, handler] of Object.entries(passOn)) {
          process.removeListener(name, handler);
        }
        try {
          process.kill(process.pid, signal);
        } catch {
          // fall through to the exit status below
        }
      }
      process.exit(128 + (os.constants.signals[signal] || 0));
    }
    process.exit(code === null ? 1 : code);
  });
}

main();
