// Copyright 2018 Blues Inc.  All rights reserved.
// Use of this source code is governed by licenses granted by the
// copyright holder including that found in the LICENSE file.

// Package xj is the JSONata evaluator behind package jsonata: the evaluator of
// github.com/blues/jsonata-go v1.5.4 (MIT licence, see ../LICENSE), kept here so that the
// language features the 1.x port lacks (the focus and index variable bindings @ and #, the
// parent operator %, a call depth limit) can be added to its parser and evaluation.
// Its function library (jlib) and value types (jtypes) are still the module's.
package xj
