"""Courtesy and reaction vocabulary: the words a chat message uses when it asks for nothing.

Data for triage's low-information gate.  Greetings, thanks, acknowledgements, agreement,
reactions, laughter, apologies, farewells and the fillers and intensifiers that go with them,
in the languages teams write in.  The gate removes these (and stop words) and retrieves when
anything is left, so the lists only need the words of small talk, never topic words: a word
that can name a topic on its own ("holiday", "birthday", "weekend", "day", "team") appears
here only inside a phrase ("happy holidays").

- ``PHRASES``: multi-word expressions for scripts that separate words, matched on word bounds.
- ``UNSPACED``: expressions of scripts written without spaces (Chinese, Japanese, Thai),
  removed wherever they occur.
- ``PARTICLES``: single characters of those scripts that only soften or close a sentence.
- ``WORDS``: single words, lower-case, any script.
- ``ABBREVIATIONS``: chat shorthand for the same ("np", "yw", "brb").
- ``FUNCTION_WORDS``: articles, prepositions and "all/everyone" of languages other than
  English and Ukrainian (whose stop words the analyser already has), for "bonjour à tous".
- ``ADDRESSEES``: words that name who a greeting or thanks is for ("hey team", "thanks all");
  they count as small talk only right after a greeting or thanks.
- ``LAUGHTER`` and ``EMOTICONS``: patterns (regular expressions) of laughter and text faces.
- ``INTENTS``: what the writer will do or asks to be passed over ("I'll take a look", "ignore that"), small talk
  only in a message that is not a question.
- ``PRAISE``: a pattern of praise, thanks or apology with what it is for ("congrats on the launch", "thanks for
  your patience"), and of a reaction to the answer ("great answer"), removed whole.
"""

from __future__ import annotations

PHRASES = frozenset(
    """
thank you|thank u|thanks a lot|thanks a bunch|thanks a million|thanks so much|many thanks|much appreciated
good morning|good afternoon|good evening|good night|good day|good job|good work|good stuff|good one
have a nice day|have a good day|have a great day|have a nice weekend|have a good weekend|have a great weekend
nice weekend|good weekend|happy friday|happy monday|happy holidays|happy new year|happy birthday|merry christmas
see you|see ya|see you later|see you soon|see you tomorrow|talk later|talk soon|catch you later|take care
how are you|how are you doing|how's it going|what's up|whats up|how do you do|nice to meet you
got it|get it|i see|i got it|makes sense|that makes sense|sounds good|sounds great|sounds fine|will do|all good
no worries|no problem|no prob|you're welcome|you are welcome|my bad|my pleasure|all set|that's all|that's it
fair enough|of course|for sure|sure thing|okie dokie|oki doki|okey dokey|roger that|right on
never mind|nevermind|not bad|well done|nice one|good to know
that helps|this helps|it helps|very helpful|super helpful|really helpful
spot on|nailed it|you rock|you're a star|you are a star|you're the best|you are the best|you legend|you're a legend
you're a lifesaver|what a lifesaver|great stuff|brilliant stuff|cool stuff|nice stuff|love it|love that|much obliged
thanks for your help|thanks for the help|thank you for your help|thank you for the help|thanks for helping
thank you for helping|appreciate the help|appreciate your help|thanks heaps|thanks a ton|thx a ton|thanks loads
thank you kindly|great job|nice work|great work|amazing work|awesome work|excellent work|top notch|bang on
good call|fair point|crystal clear|sounds like a plan|that's everything|that is everything|nothing else
appreciate your patience|that settles it|much love|love this|great news|good news|see you tomorrow|cya tomorrow
enjoy your weekend|enjoy the weekend|take it easy|danke dir|щиро вдячний|щиро вдячна
this is gold|that'll do|that will do|that's all i needed|that's all i wanted|all i needed|all i wanted|cool beans
works for me|copy that|makes total sense
makes perfect sense|talk tomorrow|talk to you tomorrow|talk to you later|later gator|my mistake|found it
до завтра|до зустрічі завтра
clears it up|clears things up|that clears it up|good point|that's all for today|that's all for now|done for today
done for now|nothing more|that's it for today|that's it for now|catch you tomorrow|speak soon|speak later|hello world
merry xmas|glad i could help|happy to help|happy to assist|glad to help|das hilft|any time
sorry to bother you|sorry to bother|wrong chat|wrong channel|wrong thread|wrong window|problem solved
that fixed it|fixed it|it works now|it works|it worked|it's working|works now|i'm off|i am off|signing off
logging off|sleep well|see you on monday|see you monday|see you next week|talk to you next week|until next time
exactly what we needed|what we needed|that's what i meant|what i meant|that's what i was missing
what i was missing|makes complete sense|all makes sense|sorry for the late reply|sorry i'm late|i'm late|be right back
back in 5|back in a bit|afk for a bit|for a bit|gotta run|gotta go|i have to go|have to go|got to go|sweet dreams
good luck|best of luck|fingers crossed|schönes wochenende|até amanhã|buona giornata|buona serata|appreciate the summary
stay safe|how are things|hope you're well|hope you are well|hope all is well|long time no see|welcome aboard
great meeting|good meeting|good chat|great chat|that's funny|that is funny|ta muchly|grazie tante|muy amable
for today|for now|ajudou muito|дуже допомогло|допомогло|für die hilfe|happy tuesday|happy wednesday
happy thursday|happy weekend all
good to hear|glad to hear|nice to hear|great to hear|happy to hear|happy to hear that|that's a relief|what a relief
no rush|no hurry|take your time|whenever you can|when you get a chance|at your convenience
thanks for checking|thanks for looking into it|thanks for looking|thanks for the quick reply
thanks for the quick response|thanks for the reply|thanks for replying|thanks for getting back
thanks for the info|thanks for the information
thanks for the update|thanks for sharing|thanks for the heads up|appreciate the quick answer|appreciate the quick reply
appreciate it|appreciate that|quick question|quick one|one sec|one second|one moment|just a sec|just a moment
give me a sec|give me a minute|hang on|hold on|i'm back|i am back|we're back|back again
happy weekend|have a lovely evening|have a lovely day|have a lovely weekend|have a nice evening|have a good evening
have a great evening|enjoy your evening|enjoy your day|well deserved|hats off|props to|shout out to|shoutout to
big thanks|huge thanks|massive thanks|special thanks|shout out to the team|props to the team|kudos to the team
thanks to the team|same here|me too|100%|100 percent
that's what i thought|that's what i figured|as i thought|i thought so|i figured|this helped a ton|that helped
this helped|helped a lot|you saved me hours|you saved me a lot of time|you saved me|saved me hours
saved me a lot of time|life saver
дякую за допомогу|дякую за відповідь|дякую за інфо|гарного вечора|гарного дня|гарних вихідних|гарного тижня
obrigada pela ajuda|obrigado pela ajuda|gracias por la ayuda|gracias por tu ayuda|on se voit demain|à demain
merci pour l'aide|merci pour ton aide|danke für die hilfe|danke für deine hilfe|bis morgen
exactly what i needed|just what i needed|exactly what i wanted|just what i wanted|what i was looking for
that answers it|that answers my question|answers my question|that was quick|that was fast
good answer|great answer|helpful answer|perfect answer|very helpful answer|really helpful answer|super helpful answer
добрий день|добрий ранок|доброго ранку|добрий вечір|на добраніч|до побачення|до зустрічі|будь ласка|на все добре
доброе утро|добрый день|добрый вечер|спокойной ночи|до свидания|до встречи|не за что|большое спасибо
щиро дякую|дуже дякую|все зрозуміло|все ясно|все понятно|без проблем
buenos días|buenas tardes|buenas noches|muchas gracias|de nada|hasta luego|hasta mañana|qué tal|muy bien
bom dia|boa tarde|boa noite|muito obrigado|muito obrigada|de nada|até logo|até mais|tudo bem|tudo bom
merci beaucoup|bonne journée|bonne soirée|bonne nuit|au revoir|à plus|à bientôt|de rien|ça marche|pas de souci
guten morgen|guten tag|guten abend|gute nacht|vielen dank|danke schön|danke sehr|alles klar|bis später|bis bald
bis dann|kein problem|gern geschehen
grazie mille|va bene|a dopo|a presto|di niente|prego
dank je|dank je wel|dank u|dank u wel|tot ziens|geen probleem
dzień dobry|dobry wieczór|do widzenia|na razie|nie ma sprawy|dziękuję bardzo
dobrý den|na shledanou
tack så mycket|tusen takk|mange tak
teşekkür ederim|çok teşekkürler|günaydın|iyi günler|kolay gelsin
ευχαριστώ πολύ|καλημέρα|καλησπέρα
شكرا جزيلا|صباح الخير|مساء الخير|السلام عليكم|مع السلامة
תודה רבה|בוקר טוב|לילה טוב
theek hai|thik hai|bahut shukriya|bahut dhanyavaad
xin chào|cảm ơn|cám ơn|tạm biệt
terima kasih|selamat pagi|sama sama
asante sana
catch ya|catch ya later|catch you|everything i needed|everything i wanted|how is it going|how is everything
how's everything|everything i need|you're a gem|you are a gem|that's everything i needed|testing 123|test 123
just testing|test message|this is a test|is that it|was that it|is that everything|was that everything
""".replace("\n", "|").split("|")
) - {""}

# What the writer will do or asks to be passed over, said of the answer ("I'll take a look", "ignore that"):
# small talk in a statement, but a question about the topic when asked ("Can I ignore this?", "Where can I
# have a look at it?"), so they are removed only from a message that is not a question.
INTENTS = frozenset(
    """
take a look|have a look|check it out|check them out|give it a go|give it a try|give it a shot|ignore this
ignore that|scratch that|disregard that|ignore my last message|ignore my previous message|ignore the last message
disregard my last message
""".replace("\n", "|").split("|")
) - {""}

UNSPACED = (
    # Chinese
    "谢谢你们",
    "谢谢你",
    "谢谢您",
    "谢谢",
    "多谢",
    "感谢",
    "你们好",
    "你好",
    "您好",
    "大家好",
    "早上好",
    "早安",
    "晚安",
    "再见",
    "好的",
    "收到",
    "明白了",
    "明白",
    "了解了",
    "没问题",
    "没事",
    "不客气",
    "太棒了",
    "不错",
    "有用",
    "辛苦了",
    "哈哈",
    # Japanese
    "ありがとうございました",
    "ありがとうございます",
    "ありがとう",
    "おはようございます",
    "おはよう",
    "こんにちは",
    "こんばんは",
    "おやすみなさい",
    "おつかれさまです",
    "お疲れ様です",
    "お疲れさまです",
    "よろしくお願いします",
    "よろしく",
    "了解です",
    "了解",
    "承知しました",
    "わかりました",
    "なるほど",
    "すごい",
    "いいね",
    "どうも",
    "さようなら",
    "です",
    "ます",
    # Thai
    "สวัสดีครับ",
    "สวัสดีค่ะ",
    "สวัสดี",
    "ขอบคุณมาก",
    "ขอบคุณ",
    "ครับ",
    "ค่ะ",
    "โอเค",
)

PARTICLES = frozenset("了啊呀吧哦的嗯呢嘛哇喔噢哈呵嘻对是好很非常你您们大家ねよなはいうん！")

WORDS = frozenset(
    """
hi hello hey heya hiya hullo howdy yo sup greetings morning afternoon evening night gm gn welcome hola
thanks thank thx thnx thanx thks tks tnx tq ty tysm tyvm cheers ta appreciate appreciated appreciation grateful kudos
congrats congratulations bravo
ok okay okey oki okie okey-dokey k kk kay sure yes yeah yea yep yup ya yah aye no nope nah nay
alright aight right fine good cool nice great awesome perfect glad precisely lifesaver figured anytime tgif maybe nvm
enjoy excellent amazing wonderful fantastic brilliant impressive grand brill terrific stellar marvellous marvelous
legend m8
lovely sweet neat super superb splendid fab fabulous wow whoa woah yay yippee woohoo hooray phew
helpful useful informative interesting clear correct exactly indeed true agreed agree absolutely totally
definitely certainly understood noted done roger ack acknowledged gotcha gotit understand see sorted kindly heaps wicked
sorry apologies pardon oops whoops
bye byebye goodbye goodnight cya later ttyl laters farewell
lol lmao lmfao rofl haha hehe hihi hah heh xd omg omfg wtf damn
hmm hm hmmm uh um umm uhm er erm ah oh ooh aha ahh ugh meh eh mhm uh-huh
very so really much many lot lots bunch tons quite pretty truly such super just still anyway anyways
guys folks everyone everybody all yall y'all mate buddy pal dude bro man fam
please pls plz again too also well then
привіт привітик вітаю здоровенькі здрастуйте дякую дяк дяки дякс дякуємо спасибі вдячний вдячна
ок окей оке добре гаразд зрозуміло зрозумів зрозуміла ясно так ні ага угу авжеж звісно звичайно
бувай бувайте па круто супер чудово клас класно прекрасно відмінно корисно цікаво норм нормально
вибач вибачте перепрошую сорі дуже велике всім усім друзі друже колеги щиро
привет здравствуйте здрасте спасибо спс благодарю пасиб хорошо понятно понял поняла ладно да нет
пока круто отлично полезно интересно нормально извини извините очень большое всем
gracias vale genial perfecto bueno buena bien claro entendido listo adiós chao saludos excelente
estupendo guay útil muy mil sí oye
olá oi obrigado obrigada valeu beleza certo entendi legal ótimo perfeito tchau show muito sim
salut bonjour bonsoir coucou merci beaucoup d'accord daccord super génial parfait top entendu compris
ciao utile très nickel oui bien
hallo moin servus danke dankeschön toll prima perfekt verstanden genau tschüss hilfreich sehr gut ja
jawohl klar super
grazie perfetto capito ottimo bene arrivederci salve buongiorno buonasera molto sì
hoi bedankt dankjewel oké helder doei nuttig
cześć dzięki dziękuję spoko okej jasne rozumiem świetnie super pa bardzo tak
ahoj díky děkuji
hej hei tack takk bra toppen moi kiitos kiitti
merhaba selam teşekkürler sağol sağolun tamam süper harika
γεια ευχαριστώ εντάξει
مرحبا شكرا شكراً تمام ممتاز حسنا اهلا أهلا
שלום תודה סבבה אחלה
नमस्ते धन्यवाद शुक्रिया ठीक अच्छा है
namaste dhanyavaad dhanyavad shukriya accha acha achha theek thik
vâng dạ tốt tuyệt halo hai makasih oke baik siap mantap sip asante sawa jambo habari
안녕하세요 안녕 감사합니다 고맙습니다 고마워요 고마워 네 예 알겠습니다 알겠어요 좋아요 좋아 최고 대박
arigatou arigato hvala zdravo bok pozdrav mulțumesc multumesc mersi bună buna salut köszönöm köszi szia salamat kumusta
ďakujem dakujem ačiū labas paldies sveiki aitäh tere gràcies eskerrik takk dankie ngiyabonga
благодаря здравей мерси ممنون مرسی سلام شکریہ ধন্যবাদ நன்றி მადლობა շնորհակալություն አመሰግናለሁ
""".split()
)

ABBREVIATIONS = frozenset("np nw yw ty tyvm tysm thx brb bbl afk gtg g2g ttyl omw ikr fyi idk ok".split())

FUNCTION_WORDS = frozenset(
    """
à a au aux de du des la le les l' un une et ou pour avec tous toutes tout vous
el los las lo un una y o para por con todos todas a al del
o os as ao aos às um uma e ou para com todos todas
il lo gli i una e o per con tutti tutte
der die das den dem ein eine und oder für mit euch alle allen dir dich ihnen dafür
het een en voor met iedereen allemaal
i w z na dla wszystkim wszystkich
""".split()
)

ADDRESSEES = frozenset(
    "team crew squad gang colleagues colleague everyone all folks bot robot команда колеги всім".split()
)

LAUGHTER = (
    r"(?:a?h[aeiou]){2,}h?",
    r"l+o+l+[lo]*",
    r"lmf?a+o+",
    r"x+d+",
    r"(?:ja){2,}j?",
    r"(?:je){2,}j?",
    r"k{3,}",
    r"(?:rs){1,}",
    r"(?:х[аеи]){2,}х?",
    r"(?:ах){2,}а?",
    r"[\u314b\u314e\u110f\u1112]{2,}",  # ㅋㅋ/ㅎㅎ, also as NFKC folds them (conjoining jamo)
    r"(?:哈|呵|嘻){2,}",
    r"w{3,}",
    r"5{3,}",
)

# Praise, thanks and apologies with what they are for, after "on", "to", "for", "with" or "about" (and their
# Ukrainian, Spanish, French, German and Portuguese twins), one word long (after "the", "your"…): "congrats on the
# launch", "kudos to Olena", "thanks for your patience", "sorry for the delay". What is thanked for is named, not
# asked about, but only where the clause ends there: in "cheers for that lunch policy" or "thanks for the help
# DEC-0050" the words after it are a question ("congrats on the launch, what's next?" keeps "next"). Without a
# preposition the pattern does not apply ("good job descriptions": the phrase "good job" goes, "descriptions"
# stays). And a reaction to the answer itself: "great answer", "useful summary".
PRAISE = (
    r"(?<!\w)(?:(?:congrats|congratulations|kudos|props|bravo|well done|great job|good job|nice work|great work"
    r"|hats off|shout ?out|big ups|good luck|best of luck|thanks|thank you|thank u|thx|ty|cheers"
    r"|(?:many|big|huge|massive|special) thanks|appreciate(?: it)?|sorry|apologies|my apologies|vielen dank"
    r"|дякую|дякуємо|спасибі|спасибо|gracias|merci|danke|obrigad[oa]|grazie)"
    r" (?:on|to|for|with|about|за|por|pour|für|pela|pelo) (?:(?:the|your|our|my|his|her|their) )?[\w'’-]+"
    r"|(?:good|great|brilliant|excellent|nice|awesome|perfect|helpful|useful|clear|quick) "
    r"(?:answer|reply|response|explanation|summary)s?"
    # Praise of the work itself, no topic named: "lovely stuff", "superb work", "fab job", "amazing effort".
    r"|(?:good|great|brilliant|excellent|nice|awesome|perfect|amazing|wonderful|fantastic|lovely|superb|fab"
    r"|terrific|stellar|impressive|solid|cool|sweet) (?:stuff|work|job|effort|one)s?)"
    r"(?=[^\w?]*$|\s*[!.,;:…])"  # only where its clause ends: "thanks for that PTO policy?" asks about the policy
)

EMOTICONS = r"(?<!\w)(?:[:;=8][-'^]?[()\[\]dDpPoO3/\\|*xX]+|<3+|\^[_.-]?\^|[xX][dD]+|\+1|-1)(?!\w)"
