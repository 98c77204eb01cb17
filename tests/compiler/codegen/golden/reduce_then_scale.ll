; construct 0 (parallel_for)
; ModuleID = "qd_KEY"
target triple = "HOST"
target datalayout = "HOST"

define i64 @"qd_KEY_t0"(i8* %"args", i8* %"tmp", i64 %"chunk", i64 %"nchunks") nounwind "denormal-fp-math"="preserve-sign,preserve-sign"
{
entry:
  %".8" = getelementptr i8, i8* %"tmp", i64 128
  %"total" = bitcast i8* %".8" to float*
  %"rng_counter" = alloca i64
  store i64 0, i64* %"rng_counter"
  store i64 0, i64* %"rng_counter"
  store i64 0, i64* %"rng_counter"
  store float              0x0, float* %"total"
  ret i64 0
}

define i64 @"qd_KEY_t1"(i8* %"args", i8* %"tmp", i64 %"chunk", i64 %"nchunks") nounwind "denormal-fp-math"="preserve-sign,preserve-sign"
{
entry:
  %".53" = getelementptr i8, i8* %"args", i64 0
  %".54" = bitcast i8* %".53" to i64*
  %"x.data" = load i64, i64* %".54"
  %".55" = inttoptr i64 %"x.data" to float*
  %".56" = getelementptr i8, i8* %"args", i64 16
  %".57" = bitcast i8* %".56" to i64*
  %"x.shape0" = load i64, i64* %".57"
  %"i.addr" = alloca i64
  %"total.partial" = alloca float
  %"total.chunk.addr" = alloca i64
  %".15" = getelementptr i8, i8* %"tmp", i64 128
  %"total.1" = bitcast i8* %".15" to float*
  %"rng_counter" = alloca i64
  store i64 0, i64* %"rng_counter"
  %".7" = getelementptr i8, i8* %"args", i64 16
  %".8" = bitcast i8* %".7" to i64*
  %".9" = load i64, i64* %".8"
  %"x_shape0" = trunc i64 %".9" to i32
  %"begin" = sext i32 0 to i64
  %"end" = sext i32 %"x_shape0" to i64
  %"total" = sub i64 %"end", %"begin"
  %".10" = icmp sle i64 %"total", 0
  br i1 %".10", label %"entry.if", label %"entry.endif"
entry.if:
  ret i64 0
entry.endif:
  %".13" = icmp eq i64 %"chunk", -1
  br i1 %".13", label %"fold", label %"run"
fold:
  %".16" = getelementptr i8, i8* %"tmp", i64 136
  %".17" = bitcast i8* %".16" to float*
  store i64 0, i64* %"total.chunk.addr"
  br label %"total.chunk.cond"
run:
  %"inline" = icmp eq i64 %"nchunks", 0
  %".35" = icmp sgt i64 %"total", 8192
  %".36" = and i1 %"inline", %".35"
  br i1 %".36", label %"run.if", label %"run.endif"
total.chunk.cond:
  %".20" = load i64, i64* %"total.chunk.addr"
  %".21" = icmp slt i64 %".20", %"nchunks"
  br i1 %".21", label %"total.chunk.body", label %"total.chunk.done"
total.chunk.step:
  %".30" = load i64, i64* %"total.chunk.addr"
  %".31" = add i64 %".30", 1
  store i64 %".31", i64* %"total.chunk.addr"
  br label %"total.chunk.cond"
total.chunk.body:
  %"total.chunk" = trunc i64 %".20" to i32
  %".23" = sext i32 %"total.chunk" to i64
  %".24" = getelementptr float, float* %".17", i64 %".23"
  %".25" = load float, float* %".24"
  %".26" = load float, float* %"total.1"
  %".27" = fadd float %".26", %".25"
  store float %".27", float* %"total.1"
  br label %"total.chunk.step"
total.chunk.done:
  ret i64 0
run.if:
  ret i64 %"total"
run.endif:
  %".39" = select  i1 %"inline", i64 1, i64 %"nchunks"
  %".40" = add i64 %"total", %".39"
  %".41" = sub i64 %".40", 1
  %"chunk_size" = sdiv i64 %".41", %".39"
  %".42" = select  i1 %"inline", i64 0, i64 %"chunk"
  %".43" = mul i64 %".42", %"chunk_size"
  %"lo" = add i64 %"begin", %".43"
  %".44" = add i64 %"lo", %"chunk_size"
  %".45" = icmp slt i64 %".44", %"end"
  %"hi" = select  i1 %".45", i64 %".44", i64 %"end"
  store float              0x0, float* %"total.partial"
  store i64 %"lo", i64* %"i.addr"
  br label %"i.cond"
i.cond:
  %".49" = load i64, i64* %"i.addr"
  %".50" = icmp slt i64 %".49", %"hi"
  br i1 %".50", label %"i.body", label %"i.done"
i.step:
  %".64" = load i64, i64* %"i.addr"
  %".65" = add i64 %".64", 1
  store i64 %".65", i64* %"i.addr"
  br label %"i.cond"
i.body:
  %"i" = trunc i64 %".49" to i32
  store i64 0, i64* %"rng_counter"
  %".58" = getelementptr float, float* %".55", i64 %".49"
  %".59" = load float, float* %".58"
  %".60" = load float, float* %"total.partial"
  %".61" = fadd float %".60", %".59"
  store float %".61", float* %"total.partial"
  br label %"i.step"
i.done:
  %".68" = load float, float* %"total.partial"
  br i1 %"inline", label %"i.done.if", label %"i.done.else"
i.done.if:
  %".70" = load float, float* %"total.1"
  %".71" = fadd float %".70", %".68"
  store float %".71", float* %"total.1"
  br label %"i.done.endif"
i.done.else:
  %".74" = getelementptr i8, i8* %"tmp", i64 136
  %".75" = bitcast i8* %".74" to float*
  %".76" = getelementptr float, float* %".75", i64 %".42"
  store float %".68", float* %".76"
  br label %"i.done.endif"
i.done.endif:
  ret i64 0
}

define i64 @"qd_KEY_t2"(i8* %"args", i8* %"tmp", i64 %"chunk", i64 %"nchunks") nounwind "denormal-fp-math"="preserve-sign,preserve-sign"
{
entry:
  %".8" = getelementptr i8, i8* %"tmp", i64 128
  %"total" = bitcast i8* %".8" to float*
  %"rng_counter" = alloca i64
  store i64 0, i64* %"rng_counter"
  store i64 0, i64* %"rng_counter"
  %"total.1" = load float, float* %"total"
  store i64 0, i64* %"rng_counter"
  %".10" = bitcast float %"total.1" to i32
  %".11" = zext i32 %".10" to i64
  %".12" = getelementptr i8, i8* %"tmp", i64 48
  %".13" = bitcast i8* %".12" to i64*
  %".14" = load i64, i64* %".13"
  %".15" = inttoptr i64 %".14" to i64*
  %".16" = getelementptr i64, i64* %".15", i64 4
  store i64 %".11", i64* %".16"
  ret i64 0
}

; construct 1 (parallel_for)
; ModuleID = "qd_KEY"
target triple = "HOST"
target datalayout = "HOST"

define i64 @"qd_KEY_t0"(i8* %"args", i8* %"tmp", i64 %"chunk", i64 %"nchunks") nounwind "denormal-fp-math"="preserve-sign,preserve-sign"
{
entry:
  %".78" = getelementptr i8, i8* %"args", i64 24
  %".79" = bitcast i8* %".78" to i64*
  %"out.data" = load i64, i64* %".79"
  %".80" = inttoptr i64 %"out.data" to float*
  %".81" = getelementptr i8, i8* %"args", i64 40
  %".82" = bitcast i8* %".81" to i64*
  %"out.shape0" = load i64, i64* %".82"
  %"i.addr" = alloca i64
  %"rng_counter" = alloca i64
  store i64 0, i64* %"rng_counter"
  %".7" = getelementptr i8, i8* %"tmp", i64 48
  %".8" = bitcast i8* %".7" to i64*
  %".9" = load i64, i64* %".8"
  %".10" = inttoptr i64 %".9" to i64*
  %".11" = getelementptr i64, i64* %".10", i64 4
  %".12" = load i64, i64* %".11"
  %".13" = trunc i64 %".12" to i32
  %".14" = bitcast i32 %".13" to float
  %".15" = getelementptr i8, i8* %"args", i64 40
  %".16" = bitcast i8* %".15" to i64*
  %".17" = load i64, i64* %".16"
  %"out_shape0" = trunc i64 %".17" to i32
  %"begin" = sext i32 0 to i64
  %"end" = sext i32 %"out_shape0" to i64
  %"total" = sub i64 %"end", %"begin"
  %".18" = icmp sle i64 %"total", 0
  br i1 %".18", label %"entry.if", label %"entry.endif"
entry.if:
  ret i64 0
entry.endif:
  %".21" = icmp eq i64 %"chunk", -1
  br i1 %".21", label %"fold", label %"run"
fold:
  ret i64 0
run:
  %"inline" = icmp eq i64 %"nchunks", 0
  %".24" = icmp sgt i64 %"total", 8192
  %".25" = and i1 %"inline", %".24"
  br i1 %".25", label %"run.if", label %"run.endif"
run.if:
  ret i64 %"total"
run.endif:
  %".28" = select  i1 %"inline", i64 1, i64 %"nchunks"
  %".29" = add i64 %"total", %".28"
  %".30" = sub i64 %".29", 1
  %"chunk_size" = sdiv i64 %".30", %".28"
  %".31" = select  i1 %"inline", i64 0, i64 %"chunk"
  %".32" = mul i64 %".31", %"chunk_size"
  %"lo" = add i64 %"begin", %".32"
  %".33" = add i64 %"lo", %"chunk_size"
  %".34" = icmp slt i64 %".33", %"end"
  %"hi" = select  i1 %".34", i64 %".33", i64 %"end"
  store i64 %"lo", i64* %"i.addr"
  br label %"i.cond"
i.cond:
  %".37" = load i64, i64* %"i.addr"
  %".38" = icmp slt i64 %".37", %"hi"
  br i1 %".38", label %"i.body", label %"i.done"
i.step:
  %".86" = load i64, i64* %"i.addr"
  %".87" = add i64 %".86", 1
  store i64 %".87", i64* %"i.addr"
  br label %"i.cond"
i.body:
  %"i" = trunc i64 %".37" to i32
  store i64 0, i64* %"rng_counter"
  %".41" = getelementptr i8, i8* %"tmp", i64 40
  %".42" = bitcast i8* %".41" to i64*
  %".43" = load i64, i64* %".42"
  %".44" = load i64, i64* %"rng_counter"
  %".45" = add i64 %".44", 1
  store i64 %".45", i64* %"rng_counter"
  %".47" = xor i64 %".43", 10723151780598845931
  %".48" = lshr i64 %".47", 30
  %".49" = xor i64 %".47", %".48"
  %".50" = mul i64 %".49", 13787848793156543929
  %".51" = lshr i64 %".50", 27
  %".52" = xor i64 %".50", %".51"
  %".53" = mul i64 %".52", 10723151780598845931
  %".54" = lshr i64 %".53", 31
  %".55" = xor i64 %".53", %".54"
  %".56" = add i64 %".55", %".37"
  %".57" = lshr i64 %".56", 30
  %".58" = xor i64 %".56", %".57"
  %".59" = mul i64 %".58", 13787848793156543929
  %".60" = lshr i64 %".59", 27
  %".61" = xor i64 %".59", %".60"
  %".62" = mul i64 %".61", 10723151780598845931
  %".63" = lshr i64 %".62", 31
  %".64" = xor i64 %".62", %".63"
  %".65" = add i64 %".64", %".44"
  %".66" = lshr i64 %".65", 30
  %".67" = xor i64 %".65", %".66"
  %".68" = mul i64 %".67", 13787848793156543929
  %".69" = lshr i64 %".68", 27
  %".70" = xor i64 %".68", %".69"
  %".71" = mul i64 %".70", 10723151780598845931
  %".72" = lshr i64 %".71", 31
  %".73" = xor i64 %".71", %".72"
  %".74" = lshr i64 %".73", 40
  %".75" = uitofp i64 %".74" to float
  %".76" = fmul float %".75", 0x3e70000000000000
  %".77" = fmul float %".14", %".76"
  %".83" = getelementptr float, float* %".80", i64 %".37"
  store float %".77", float* %".83"
  br label %"i.step"
i.done:
  ret i64 0
}
