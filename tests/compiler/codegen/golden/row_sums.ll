; construct 0 (parallel_for)
; ModuleID = "qd_KEY"
target triple = "HOST"
target datalayout = "HOST"

define i64 @"qd_KEY_t0"(i8* %"args", i8* %"tmp", i64 %"chunk", i64 %"nchunks") nounwind "denormal-fp-math"="preserve-sign,preserve-sign"
{
entry:
  %".81" = getelementptr i8, i8* %"args", i64 32
  %".82" = bitcast i8* %".81" to i64*
  %"out.data" = load i64, i64* %".82"
  %".83" = inttoptr i64 %"out.data" to i32*
  %".84" = getelementptr i8, i8* %"args", i64 48
  %".85" = bitcast i8* %".84" to i64*
  %"out.shape0" = load i64, i64* %".85"
  %".44" = getelementptr i8, i8* %"args", i64 0
  %".45" = bitcast i8* %".44" to i64*
  %"m.data" = load i64, i64* %".45"
  %".46" = inttoptr i64 %"m.data" to i32*
  %".47" = getelementptr i8, i8* %"args", i64 16
  %".48" = bitcast i8* %".47" to i64*
  %"m.shape0" = load i64, i64* %".48"
  %".49" = getelementptr i8, i8* %"args", i64 24
  %".50" = bitcast i8* %".49" to i64*
  %"m.shape1" = load i64, i64* %".50"
  %"j.addr" = alloca i64
  %"s" = alloca i32
  %"i.addr" = alloca i64
  %"rng_counter" = alloca i64
  store i64 0, i64* %"rng_counter"
  %".7" = getelementptr i8, i8* %"args", i64 16
  %".8" = bitcast i8* %".7" to i64*
  %".9" = load i64, i64* %".8"
  %"m_shape0" = trunc i64 %".9" to i32
  %".10" = getelementptr i8, i8* %"args", i64 24
  %".11" = bitcast i8* %".10" to i64*
  %".12" = load i64, i64* %".11"
  %"m_shape1" = trunc i64 %".12" to i32
  %"begin" = sext i32 0 to i64
  %"end" = sext i32 %"m_shape0" to i64
  %"total" = sub i64 %"end", %"begin"
  %".13" = icmp sle i64 %"total", 0
  br i1 %".13", label %"entry.if", label %"entry.endif"
entry.if:
  ret i64 0
entry.endif:
  %".16" = icmp eq i64 %"chunk", -1
  br i1 %".16", label %"fold", label %"run"
fold:
  ret i64 0
run:
  %"inline" = icmp eq i64 %"nchunks", 0
  %".19" = icmp sgt i64 %"total", 8192
  %".20" = and i1 %"inline", %".19"
  br i1 %".20", label %"run.if", label %"run.endif"
run.if:
  ret i64 %"total"
run.endif:
  %".23" = select  i1 %"inline", i64 1, i64 %"nchunks"
  %".24" = add i64 %"total", %".23"
  %".25" = sub i64 %".24", 1
  %"chunk_size" = sdiv i64 %".25", %".23"
  %".26" = select  i1 %"inline", i64 0, i64 %"chunk"
  %".27" = mul i64 %".26", %"chunk_size"
  %"lo" = add i64 %"begin", %".27"
  %".28" = add i64 %"lo", %"chunk_size"
  %".29" = icmp slt i64 %".28", %"end"
  %"hi" = select  i1 %".29", i64 %".28", i64 %"end"
  store i64 %"lo", i64* %"i.addr"
  br label %"i.cond"
i.cond:
  %".32" = load i64, i64* %"i.addr"
  %".33" = icmp slt i64 %".32", %"hi"
  br i1 %".33", label %"i.body", label %"i.done"
i.step:
  %".89" = load i64, i64* %"i.addr"
  %".90" = add i64 %".89", 1
  store i64 %".90", i64* %"i.addr"
  br label %"i.cond"
i.body:
  %"i" = trunc i64 %".32" to i32
  store i64 0, i64* %"rng_counter"
  store i32 0, i32* %"s"
  %".37" = sext i32 0 to i64
  %".38" = sext i32 %"m_shape1" to i64
  store i64 %".37", i64* %"j.addr"
  br label %"j.cond"
i.done:
  ret i64 0
j.cond:
  %".41" = load i64, i64* %"j.addr"
  %".42" = icmp slt i64 %".41", %".38"
  br i1 %".42", label %"j.body", label %"j.done"
j.step:
  %".77" = load i64, i64* %"j.addr"
  %".78" = add i64 %".77", 1
  store i64 %".78", i64* %"j.addr"
  br label %"j.cond"
j.body:
  %"j" = trunc i64 %".41" to i32
  %".51" = mul i64 %".32", %"m.shape1"
  %".52" = add i64 %".51", %".41"
  %".53" = getelementptr i32, i32* %".46", i64 %".52"
  %".54" = load i32, i32* %".53"
  %".55" = icmp eq i32 2, 0
  %".56" = icmp eq i32 2, -1
  %".57" = or i1 %".55", %".56"
  %".58" = select  i1 %".57", i32 1, i32 2
  %".59" = sdiv i32 %".54", %".58"
  %".60" = srem i32 %".54", %".58"
  %".61" = icmp ne i32 %".60", 0
  %".62" = icmp slt i32 %".60", 0
  %".63" = icmp slt i32 2, 0
  %".64" = xor i1 %".62", %".63"
  %".65" = and i1 %".61", %".64"
  %".66" = sub i32 %".59", 1
  %".67" = select  i1 %".65", i32 %".66", i32 %".59"
  %".68" = add i32 %".60", 2
  %".69" = select  i1 %".65", i32 %".68", i32 %".60"
  %".70" = sub i32 0, %".54"
  %".71" = select  i1 %".56", i32 %".70", i32 %".67"
  %".72" = select  i1 %".56", i32 0, i32 %".69"
  %".73" = select  i1 %".55", i32 0, i32 %".71"
  %"s.1" = load i32, i32* %"s"
  %".74" = add i32 %"s.1", %".73"
  store i32 %".74", i32* %"s"
  br label %"j.step"
j.done:
  %"s.2" = load i32, i32* %"s"
  %".86" = getelementptr i32, i32* %".83", i64 %".32"
  store i32 %"s.2", i32* %".86"
  br label %"i.step"
}
