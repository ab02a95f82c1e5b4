// Copyright 2018 Blues Inc.  All rights reserved.
// Use of this source code is governed by licenses granted by the
// copyright holder including that found in the LICENSE file.

// Package xj is the JSONata evaluator behind package jsonata: the evaluator of
// github.com/blues/jsonata-go v1.5.4 (MIT licence, see ../LICENSE), kept here so that what the
// 1.x port lacks of JSONata could be added to it: the tuple streams of the focus and index
// variable bindings (@, #) and of the parent operator (%) (tuple.go), tail calls and limits on
// an evaluation's depth and duration (tail.go, env.go), $eval (evalfn.go), typed function
// signatures checked as JSONata checks them (signature.go), JSONata's higher-order functions
// (hof.go), objects' keys in sorted order (order.go). Its function library (jlib) and value
// types (jtypes) are still the module's.
package xj
