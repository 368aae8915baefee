;; The scan behind `encodeClean` (src/output.ts), assembled into that file by scripts/kernel.mjs.
;;
;; Over UTF-8 bytes in memory, 16 at a time: finds the first byte that starts a character `stripTerminal`
;; removes (U+0000-0008, U+000B-001F, U+007F: those bytes; U+0080-009F: 0xC2 then 0x80-0x9F) and counts
;; the newlines. Hand-written because no library does this: V8's regular expressions and `indexOf` look at
;; one character at a time (~1 GB/s), which made the escape check and the line count of a 50 MiB result
;; cost more than writing it to a file.

(module
  (import "env" "memory" (memory 1))
  ;; Newlines of every range scanned so far by this instance (the caller makes one instance per text).
  (global $newlines (export "newlines") (mut i32) (i32.const 0))

  ;; 1 when the character at $i is one `stripTerminal` removes. A 0xC2 with no byte after it in the range
  ;; counts as one: the caller then takes the exact path, which is always right.
  (func $removed (param $i i32) (param $end i32) (result i32)
    (local $b i32)
    (local.set $b (i32.load8_u (local.get $i)))
    (if (i32.lt_u (local.get $b) (i32.const 0x20))
      (then (return (i32.and (i32.ne (local.get $b) (i32.const 0x09)) (i32.ne (local.get $b) (i32.const 0x0a))))))
    (if (i32.eq (local.get $b) (i32.const 0x7f)) (then (return (i32.const 1))))
    (if (i32.ne (local.get $b) (i32.const 0xc2)) (then (return (i32.const 0))))
    (if (i32.ge_u (i32.add (local.get $i) (i32.const 1)) (local.get $end)) (then (return (i32.const 1))))
    (local.set $b (i32.load8_u (i32.add (local.get $i) (i32.const 1))))
    (i32.and (i32.ge_u (local.get $b) (i32.const 0x80)) (i32.le_u (local.get $b) (i32.const 0x9f))))

  ;; Scans [$start, $end): returns the index of the first removed character, or -1 with $newlines updated.
  (func (export "scan") (param $start i32) (param $end i32) (result i32)
    (local $p i32) (local $end16 i32) (local $stop i32) (local $q i32) (local $count i32)
    (local $v v128) (local $nl v128) (local $acc v128) (local $total v128)
    (local.set $p (local.get $start))
    (local.set $end16 (i32.add (local.get $start) (i32.and (i32.sub (local.get $end) (local.get $start)) (i32.const -16))))
    (block $vectors_done
      (loop $blocks
        (br_if $vectors_done (i32.ge_u (local.get $p) (local.get $end16)))
        ;; Newlines are counted per byte lane, which holds 255: at most 255 vectors per block.
        (local.set $stop (i32.add (local.get $p) (i32.const 4080)))
        (if (i32.gt_u (local.get $stop) (local.get $end16)) (then (local.set $stop (local.get $end16))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (loop $vectors
          (local.set $v (v128.load (local.get $p)))
          (local.set $nl (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x0a))))
          ;; A matching lane is 0xFF (-1): subtracting it counts one.
          (local.set $acc (i8x16.sub (local.get $acc) (local.get $nl)))
          ;; Candidates: below 0x20 except tab and newline, DEL, and 0xC2 (checked with the byte after it).
          (if (v128.any_true
                (v128.or
                  (v128.andnot
                    (i8x16.lt_u (local.get $v) (i8x16.splat (i32.const 0x20)))
                    (v128.or (local.get $nl) (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x09)))))
                  (v128.or
                    (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x7f)))
                    (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0xc2))))))
            (then
              (local.set $q (local.get $p))
              (loop $bytes
                (if (call $removed (local.get $q) (local.get $end)) (then (return (local.get $q))))
                (local.set $q (i32.add (local.get $q) (i32.const 1)))
                (br_if $bytes (i32.lt_u (local.get $q) (i32.add (local.get $p) (i32.const 16)))))))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (br_if $vectors (i32.lt_u (local.get $p) (local.get $stop))))
        (local.set $total (i32x4.add (local.get $total)
          (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $acc)))))
        (br $blocks)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $p) (local.get $end)))
        (if (call $removed (local.get $p) (local.get $end)) (then (return (local.get $p))))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 0x0a))
          (then (local.set $count (i32.add (local.get $count) (i32.const 1)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $tail)))
    (global.set $newlines
      (i32.add (global.get $newlines)
        (i32.add (local.get $count)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $total)) (i32x4.extract_lane 1 (local.get $total)))
            (i32.add (i32x4.extract_lane 2 (local.get $total)) (i32x4.extract_lane 3 (local.get $total)))))))
    (i32.const -1)))
