; construct 0 (parallel_for)
; ModuleID = "qd_KEY"
target triple = "HOST"
target datalayout = "HOST"

define i64 @"qd_KEY_t0"(i8* %"args", i8* %"tmp", i64 %"chunk", i64 %"nchunks") nounwind "denormal-fp-math"="preserve-sign,preserve-sign"
{
entry:
  %".45" = getelementptr i8, i8* %"args", i64 32
  %".46" = bitcast i8* %".45" to i64*
  %"y.data" = load i64, i64* %".46"
  %".47" = inttoptr i64 %"y.data" to float*
  %".48" = getelementptr i8, i8* %"args", i64 48
  %".49" = bitcast i8* %".48" to i64*
  %"y.shape0" = load i64, i64* %".49"
  %".37" = getelementptr i8, i8* %"args", i64 8
  %".38" = bitcast i8* %".37" to i64*
  %"x.data" = load i64, i64* %".38"
  %".39" = inttoptr i64 %"x.data" to float*
  %".40" = getelementptr i8, i8* %"args", i64 24
  %".41" = bitcast i8* %".40" to i64*
  %"x.shape0" = load i64, i64* %".41"
  %"i.addr" = alloca i64
  %"rng_counter" = alloca i64
  store i64 0, i64* %"rng_counter"
  %".7" = getelementptr i8, i8* %"args", i64 0
  %".8" = bitcast i8* %".7" to i64*
  %"a" = load i64, i64* %".8"
  %".9" = trunc i64 %"a" to i32
  %".10" = bitcast i32 %".9" to float
  %".11" = getelementptr i8, i8* %"args", i64 24
  %".12" = bitcast i8* %".11" to i64*
  %".13" = load i64, i64* %".12"
  %"x_shape0" = trunc i64 %".13" to i32
  %"begin" = sext i32 0 to i64
  %"end" = sext i32 %"x_shape0" to i64
  %"total" = sub i64 %"end", %"begin"
  %".14" = icmp sle i64 %"total", 0
  br i1 %".14", label %"entry.if", label %"entry.endif"
entry.if:
  ret i64 0
entry.endif:
  %".17" = icmp eq i64 %"chunk", -1
  br i1 %".17", label %"fold", label %"run"
fold:
  ret i64 0
run:
  %"inline" = icmp eq i64 %"nchunks", 0
  %".20" = icmp sgt i64 %"total", 8192
  %".21" = and i1 %"inline", %".20"
  br i1 %".21", label %"run.if", label %"run.endif"
run.if:
  ret i64 %"total"
run.endif:
  %".24" = select  i1 %"inline", i64 1, i64 %"nchunks"
  %".25" = add i64 %"total", %".24"
  %".26" = sub i64 %".25", 1
  %"chunk_size" = sdiv i64 %".26", %".24"
  %".27" = select  i1 %"inline", i64 0, i64 %"chunk"
  %".28" = mul i64 %".27", %"chunk_size"
  %"lo" = add i64 %"begin", %".28"
  %".29" = add i64 %"lo", %"chunk_size"
  %".30" = icmp slt i64 %".29", %"end"
  %"hi" = select  i1 %".30", i64 %".29", i64 %"end"
  store i64 %"lo", i64* %"i.addr"
  br label %"i.cond"
i.cond:
  %".33" = load i64, i64* %"i.addr"
  %".34" = icmp slt i64 %".33", %"hi"
  br i1 %".34", label %"i.body", label %"i.done"
i.step:
  %".56" = load i64, i64* %"i.addr"
  %".57" = add i64 %".56", 1
  store i64 %".57", i64* %"i.addr"
  br label %"i.cond"
i.body:
  %"i" = trunc i64 %".33" to i32
  store i64 0, i64* %"rng_counter"
  %".42" = getelementptr float, float* %".39", i64 %".33"
  %".43" = load float, float* %".42"
  %".44" = fmul float %".10", %".43"
  %".50" = getelementptr float, float* %".47", i64 %".33"
  %".51" = load float, float* %".50"
  %".52" = fadd float %".44", %".51"
  %".53" = getelementptr float, float* %".47", i64 %".33"
  store float %".52", float* %".53"
  br label %"i.step"
i.done:
  ret i64 0
}
